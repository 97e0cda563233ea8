//! Rate limits and concurrency caps: the spec says servers MUST rate limit
//! tool invocations. Over-limit calls are refused at once with the time to
//! retry; nothing queues without bound.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A token bucket: `rate` tokens per second, holding at most `burst`.
#[derive(Debug)]
pub struct TokenBucket {
    rate: f64,
    burst: f64,
    state: Mutex<BucketState>,
}

#[derive(Debug)]
struct BucketState {
    tokens: f64,
    refilled: Instant,
}

impl TokenBucket {
    /// A full bucket.
    pub fn new(rate: f64, burst: f64) -> Self {
        TokenBucket {
            rate,
            burst,
            state: Mutex::new(BucketState {
                tokens: burst,
                refilled: Instant::now(),
            }),
        }
    }

    pub fn rate(&self) -> f64 {
        self.rate
    }

    /// Takes one token, or says how long until one is available.
    pub fn take(&self) -> Result<(), Duration> {
        let mut state = self.state.lock().unwrap();
        let now = Instant::now();
        let elapsed = now.duration_since(state.refilled).as_secs_f64();
        state.tokens = (state.tokens + elapsed * self.rate).min(self.burst);
        state.refilled = now;
        if state.tokens >= 1.0 {
            state.tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - state.tokens) / self.rate))
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
}
