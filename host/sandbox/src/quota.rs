//! Rate limits and concurrency caps: the spec says servers MUST rate limit
//! tool invocations. Over-limit calls are refused at once with the time to
//! retry; nothing queues without bound.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use corral_tool::Principal;

use crate::limits::{Limits, RatePer};

/// The most principals whose buckets one tool keeps, with `rate-per =
/// "principal"`. Past it, the buckets that are full again (a fresh one is
/// the same) are dropped first, then the longest idle, down to nine
/// tenths, so that making room costs little per new principal.
pub const MAX_PRINCIPALS_PER_TOOL: usize = 10_000;

/// A token bucket: `rate` tokens per second, holding at most `burst`.
#[derive(Debug)]
pub struct TokenBucket {
    rate: f64,
    burst: f64,
    state: Mutex<BucketState>,
}

#[derive(Debug, Clone, Copy)]
struct BucketState {
    tokens: f64,
    /// When it was last refilled: when a token was last taken.
    refilled: Instant,
}

impl BucketState {
    fn full(burst: f64, now: Instant) -> BucketState {
        BucketState {
            tokens: burst,
            refilled: now,
        }
    }

    /// Its tokens as of `now`, refilled at `rate` up to `burst`.
    fn tokens_at(&self, rate: f64, burst: f64, now: Instant) -> f64 {
        let elapsed = now.saturating_duration_since(self.refilled).as_secs_f64();
        (self.tokens + elapsed * rate).min(burst)
    }

    /// Takes one token, or says how long until one is available.
    fn take(&mut self, rate: f64, burst: f64, now: Instant) -> Result<(), Duration> {
        self.tokens = self.tokens_at(rate, burst, now);
        self.refilled = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - self.tokens) / rate))
        }
    }
}

impl TokenBucket {
    /// A full bucket.
    pub fn new(rate: f64, burst: f64) -> Self {
        TokenBucket {
            rate,
            burst,
            state: Mutex::new(BucketState::full(burst, Instant::now())),
        }
    }

    /// Takes one token, or says how long until one is available.
    pub fn take(&self) -> Result<(), Duration> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.take(self.rate, self.burst, Instant::now())
    }
}

/// One tool's rate limit (`[limits] rate`, `burst`, `rate-per`): a bucket
/// for every caller together, or one for each principal. Calls without a
/// principal (stdio, a server with one shared token) always take from the
/// shared bucket.
#[derive(Debug)]
pub struct ToolRate {
    shared: TokenBucket,
    /// With `rate-per = "principal"`: each principal's bucket, by
    /// [`corral_tool::Principal::key`].
    principals: Option<Mutex<PrincipalBuckets>>,
}

#[derive(Debug)]
struct PrincipalBuckets {
    buckets: HashMap<String, BucketState>,
    capacity: usize,
}

/// Whose bucket refused a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// The tool's (every caller's, or every call without a principal).
    Tool,
    /// The calling principal's own.
    Principal,
}

impl ToolRate {
    /// The rate limit `limits` set for one tool.
    pub fn new(limits: &Limits) -> ToolRate {
        ToolRate::with_capacity(limits, MAX_PRINCIPALS_PER_TOOL)
    }

    /// As [`ToolRate::new`], keeping at most `capacity` principals.
    fn with_capacity(limits: &Limits, capacity: usize) -> ToolRate {
        ToolRate {
            shared: TokenBucket::new(limits.rate, limits.burst),
            principals: (limits.rate_per == RatePer::Principal).then(|| {
                Mutex::new(PrincipalBuckets {
                    buckets: HashMap::new(),
                    capacity: capacity.max(10),
                })
            }),
        }
    }

    pub fn rate(&self) -> f64 {
        self.shared.rate
    }

    /// Takes one token from the bucket of `principal`, or from the tool's:
    /// how long until one is available, and whose it was.
    pub fn take(&self, principal: Option<&Principal>) -> Result<(), (Duration, Refused)> {
        // The key is a hash: worked out only where it is needed.
        let key = match self.principals {
            Some(_) => principal.map(Principal::key),
            None => None,
        };
        self.take_keyed(key.as_deref())
    }

    /// [`ToolRate::take`], for the principal whose key is `principal`.
    fn take_keyed(&self, principal: Option<&str>) -> Result<(), (Duration, Refused)> {
        let (Some(principals), Some(key)) = (&self.principals, principal) else {
            return self.shared.take().map_err(|wait| (wait, Refused::Tool));
        };
        let (rate, burst) = (self.shared.rate, self.shared.burst);
        let now = Instant::now();
        let mut principals = principals.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(bucket) = principals.buckets.get_mut(key) {
            return bucket
                .take(rate, burst, now)
                .map_err(|wait| (wait, Refused::Principal));
        }
        if principals.buckets.len() >= principals.capacity {
            principals.make_room(rate, burst, now);
        }
        let mut bucket = BucketState::full(burst, now);
        let taken = bucket.take(rate, burst, now);
        principals.buckets.insert(key.to_owned(), bucket);
        taken.map_err(|wait| (wait, Refused::Principal))
    }

    /// How many principals' buckets it keeps.
    #[cfg(test)]
    fn principals(&self) -> usize {
        self.principals
            .as_ref()
            .map_or(0, |p| p.lock().unwrap().buckets.len())
    }
}

impl PrincipalBuckets {
    /// Drops the buckets that are full again (forgetting them changes
    /// nothing), then, if more than nine tenths of `capacity` are left, the
    /// longest idle down to nine tenths (each of those starts full again
    /// when its principal comes back).
    fn make_room(&mut self, rate: f64, burst: f64, now: Instant) {
        self.buckets
            .retain(|_, bucket| bucket.tokens_at(rate, burst, now) < burst);
        let keep = self.capacity - self.capacity / 10;
        if self.buckets.len() <= keep {
            return;
        }
        let mut last_used: Vec<Instant> = self.buckets.values().map(|b| b.refilled).collect();
        // The newest `keep` stay: those last used after the cut.
        let cut = last_used.len() - keep;
        let (_, oldest_kept, _) = last_used.select_nth_unstable(cut);
        let oldest_kept = *oldest_kept;
        self.buckets
            .retain(|_, bucket| bucket.refilled >= oldest_kept);
        // Ties at the cut may keep a few more: never past `keep` + ties.
        let mut over = self.buckets.len().saturating_sub(keep);
        if over > 0 {
            self.buckets.retain(|_, bucket| {
                if over > 0 && bucket.refilled == oldest_kept {
                    over -= 1;
                    false
                } else {
                    true
                }
            });
        }
    }
}

/// "120 ms" or "1.5 s", rounded up so that retrying then succeeds.
pub fn retry_after(wait: Duration) -> String {
    let millis = wait.as_millis() + 1;
    if millis < 1000 {
        format!("{millis} ms")
    } else {
        format!("{:.1} s", millis as f64 / 1000.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_allows_its_burst_then_refills_at_its_rate() {
        let bucket = TokenBucket::new(20.0, 2.0);
        assert!(bucket.take().is_ok());
        assert!(bucket.take().is_ok());
        let wait = bucket.take().unwrap_err();
        assert!(wait <= Duration::from_millis(50), "{wait:?}");
        std::thread::sleep(wait + Duration::from_millis(5));
        assert!(bucket.take().is_ok());
    }

    fn limits(rate: f64, burst: f64, rate_per: RatePer) -> Limits {
        Limits {
            rate,
            burst,
            rate_per,
            ..Limits::default()
        }
    }

    #[test]
    fn per_tool_every_caller_takes_from_one_bucket() {
        let rate = ToolRate::new(&limits(0.001, 2.0, RatePer::Tool));
        assert!(rate.take_keyed(Some("alice")).is_ok());
        assert!(rate.take_keyed(Some("bob")).is_ok());
        assert_eq!(rate.take_keyed(None).unwrap_err().1, Refused::Tool);
        assert_eq!(rate.principals(), 0);
    }

    #[test]
    fn per_principal_each_caller_has_a_bucket_and_calls_without_one_share_the_tools() {
        let rate = ToolRate::new(&limits(0.001, 2.0, RatePer::Principal));
        for _ in 0..2 {
            assert!(rate.take_keyed(Some("alice")).is_ok());
        }
        let (wait, whose) = rate.take_keyed(Some("alice")).unwrap_err();
        assert_eq!(whose, Refused::Principal);
        assert!(wait > Duration::from_secs(100), "{wait:?}");
        assert!(rate.take_keyed(Some("bob")).is_ok());
        assert!(rate.take_keyed(None).is_ok());
        assert!(rate.take_keyed(None).is_ok());
        assert_eq!(rate.take_keyed(None).unwrap_err().1, Refused::Tool);
        assert!(rate.take_keyed(Some("bob")).is_ok());
    }

    #[test]
    fn the_principals_kept_are_bounded_and_full_buckets_go_first() {
        let rate = ToolRate::with_capacity(&limits(0.001, 1.0, RatePer::Principal), 100);
        // 100 principals, each with an empty bucket.
        for i in 0..100 {
            assert!(rate.take_keyed(Some(&format!("p{i}"))).is_ok());
        }
        assert_eq!(rate.principals(), 100);
        // The 101st makes room: the longest idle go, down to 90, and it comes in.
        assert!(rate.take_keyed(Some("new")).is_ok());
        assert_eq!(rate.principals(), 91);
        // The newest kept their empty buckets; the oldest start full again.
        assert_eq!(
            rate.take_keyed(Some("p99")).unwrap_err().1,
            Refused::Principal
        );
        assert!(rate.take_keyed(Some("p0")).is_ok());
        for i in 0..100 {
            let _ = rate.take_keyed(Some(&format!("q{i}")));
            assert!(rate.principals() <= 100);
        }

        // Buckets full again are dropped first, and nothing else.
        let fast = ToolRate::with_capacity(&limits(1000.0, 1.0, RatePer::Principal), 100);
        for i in 0..100 {
            assert!(fast.take_keyed(Some(&format!("p{i}"))).is_ok());
        }
        std::thread::sleep(Duration::from_millis(5));
        assert!(fast.take_keyed(Some("new")).is_ok());
        assert_eq!(fast.principals(), 1);
    }
}
