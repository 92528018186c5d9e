//! [`CallCanceller`]: cancels one outgoing call from the host's side, for
//! hosts whose task cancellation does not reach the Rust future.
//!
//! Kotlin needs none: cancelling the coroutine that awaits
//! [`Connection::call`](crate::Connection::call) frees the Rust future, and
//! dropping it abandons the call. Swift's generated glue keeps polling the
//! Rust future after its `Task` is cancelled, so the Swift layer makes a
//! canceller, passes it to
//! [`Connection::call_cancellable`](crate::Connection::call_cancellable) and
//! calls [`CallCanceller::cancel`] from `withTaskCancellationHandler`.

use libacp_core::CancellationToken;

/// A one-shot cancellation flag for one outgoing call (the core's
/// `CancellationToken`). Any thread may call [`CallCanceller::cancel`],
/// before, during or after the call; only the first call counts.
#[derive(Debug, Default, uniffi::Object)]
pub struct CallCanceller {
    token: CancellationToken,
}

#[uniffi::export]
impl CallCanceller {
    /// A canceller that has not fired.
    #[uniffi::constructor]
    pub fn new() -> Self {
        Self::default()
    }

    /// Cancels the call it was given to: the call returns
    /// `AcpError.Cancelled` and the peer is sent `$/cancel_request`. A call
    /// not started yet fails at once when it starts; an answered one is
    /// unaffected.
    pub fn cancel(&self) {
        self.token.cancel();
    }

    /// Whether [`CallCanceller::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.token.is_cancelled()
    }
}

impl CallCanceller {
    /// Resolves once [`CallCanceller::cancel`] was called (at once if it
    /// already was).
    pub(crate) async fn fired(&self) {
        self.token.cancelled().await;
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::CallCanceller;

    #[tokio::test]
    async fn fired_resolves_at_once_when_cancelled_before() {
        let c = CallCanceller::new();
        c.cancel();
        assert!(c.is_cancelled());
        tokio::time::timeout(Duration::from_secs(60), c.fired())
            .await
            .expect("fired() resolves once cancelled");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn fired_wakes_a_waiter_when_cancelled_from_another_thread() {
        let c = Arc::new(CallCanceller::new());
        let waiter = tokio::spawn({
            let c = c.clone();
            async move { c.fired().await }
        });
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished());
        std::thread::spawn({
            let c = c.clone();
            move || c.cancel()
        })
        .join()
        .expect("the cancelling thread ends");
        tokio::time::timeout(Duration::from_secs(60), waiter)
            .await
            .expect("the waiter wakes")
            .expect("the waiter does not panic");
        // Cancelling again changes nothing.
        c.cancel();
        assert!(c.is_cancelled());
    }
}
