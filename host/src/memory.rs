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

thread_local! {
    /// Bytes this thread allocated minus bytes it freed.
    static NET: Cell<isize> = const { Cell::new(0) };
}

fn count(delta: isize) {
    // `try_with`: allocations while the thread is being torn down go uncounted.
    let _ = NET.try_with(|net| net.set(net.get().wrapping_add(delta)));
}

// SAFETY: every call is forwarded unchanged to `System`; only a counter is
// updated besides, and updating it does not allocate.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            count(layout.size() as isize);
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            count(layout.size() as isize);
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        count(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            count(new_size as isize - layout.size() as isize);
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
    let before = NET.with(Cell::get);
    let value = work();
    let after = NET.with(Cell::get);
    (value, after.wrapping_sub(before).max(0) as usize)
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
