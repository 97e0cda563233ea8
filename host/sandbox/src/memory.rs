//! Counting the heap memory a piece of work keeps, so that budgets on what
//! plugins make the host hold count real bytes, not estimates.
//!
//! The process's allocator is the system's, wrapped to keep a running total
//! of the bytes each thread has allocated and not freed: one thread-local
//! addition per allocation. [`held_by`] reads it around a closure.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// The system allocator, counting per thread.
pub struct CountingAllocator;

/// What one thread has allocated.
#[derive(Clone, Copy)]
struct Counts {
    /// Bytes allocated minus bytes freed.
    net: isize,
    /// Allocations made (reallocations included).
    allocations: usize,
}

thread_local! {
    static COUNTS: Cell<Counts> = const { Cell::new(Counts { net: 0, allocations: 0 }) };
}

fn count(delta: isize, allocations: usize) {
    // `try_with`: allocations while the thread is being torn down go uncounted.
    let _ = COUNTS.try_with(|counts| {
        let Counts {
            net,
            allocations: made,
        } = counts.get();
        counts.set(Counts {
            net: net.wrapping_add(delta),
            allocations: made.wrapping_add(allocations),
        });
    });
}

// SAFETY: every call is forwarded unchanged to `System`; only a counter is
// updated besides, and updating it does not allocate.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            count(layout.size() as isize, 1);
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            count(layout.size() as isize, 1);
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        count(-(layout.size() as isize), 0);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            count(new_size as isize - layout.size() as isize, 1);
        }
        new
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Runs `work` and returns what it returned with the heap bytes it left
/// allocated (what it returned holds, and anything it leaked), counted on
/// this thread. Zero when `work` freed more than it kept.
pub fn held_by<T>(work: impl FnOnce() -> T) -> (T, usize) {
    let before = COUNTS.with(Cell::get).net;
    let value = work();
    let after = COUNTS.with(Cell::get).net;
    (value, after.wrapping_sub(before).max(0) as usize)
}

/// Allocations this thread has made so far (for benchmarks: what the
/// counting costs is a few nanoseconds times this).
pub fn allocations() -> usize {
    COUNTS.with(Cell::get).allocations
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_what_the_work_keeps_not_what_it_frees() {
        let (kept, bytes) = held_by(|| {
            let scratch = vec![0u8; 1 << 20];
            drop(scratch);
            vec![0u64; 1000]
        });
        assert_eq!(kept.len(), 1000);
        assert!((8000..9000).contains(&bytes), "{bytes}");
        let (_, freed) = held_by(|| drop(kept));
        assert_eq!(freed, 0);
    }
}
