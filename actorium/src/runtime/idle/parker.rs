//! What an idle worker blocks on: a Linux event fd ("Event FDs" in the Cforall runtime: Thierry
//! Delisle, PhD thesis, Waterloo 2022, chapter "Scheduling in practice"), or a mutex and
//! condition variable on other targets and under loom and shuttle.
//!
//! Invariant relied on by [`super::benaphore`]: every `park` is matched by exactly one `unpark`
//! (the benaphore only unparks after it saw the SLEEP state that a parker is about to block in),
//! so a token never stays behind to make a later `park` return early, and none is lost.

#[cfg(all(target_os = "linux", not(any(loom, shuttle, actorium_portable_parker))))]
pub(crate) use eventfd::Parker;
#[cfg(any(not(target_os = "linux"), loom, shuttle, actorium_portable_parker))]
pub(crate) use portable::Parker;

#[cfg(all(target_os = "linux", not(any(loom, shuttle, actorium_portable_parker))))]
mod eventfd {
    use std::io;
    use std::sync::atomic::{AtomicI32, Ordering};

    /// A blocking semaphore over a Linux event fd: `unpark` adds 1 to the counter with `write`,
    /// `park` blocks in `read` until the counter is non-zero and resets it to 0.
    ///
    /// The descriptor is closed by [`Parker::close`] when the pool shuts down (so a system's
    /// descriptors never outlive it, even if an address keeps its memory alive) or on drop.
    /// `fd` value: no event fd made yet.
    const UNOPENED: i32 = -1;
    /// `fd` value: closed for good.
    const CLOSED: i32 = -2;

    #[derive(Debug)]
    pub(crate) struct Parker {
        /// The event fd; `UNOPENED` until made, `CLOSED` once closed.
        fd: AtomicI32,
    }

    impl Parker {
        /// A parker whose event fd is made by [`Self::open`] (a worker row of a pool that may
        /// grow: its fd exists only once a worker used the row).
        pub(crate) fn unopened() -> Self {
            Self {
                fd: AtomicI32::new(UNOPENED),
            }
        }

        /// Makes the event fd, unless it exists (or was closed).
        pub(crate) fn open(&self) -> io::Result<()> {
            if self.fd.load(Ordering::Acquire) != UNOPENED {
                return Ok(());
            }
            // SAFETY: eventfd has no memory-safety preconditions; its result is checked below.
            let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC) };
            if fd < 0 {
                return Err(io::Error::last_os_error());
            }
            if self
                .fd
                .compare_exchange(UNOPENED, fd, Ordering::AcqRel, Ordering::Acquire)
                .is_err()
            {
                // SAFETY: `fd` was just made here and published nowhere.
                unsafe { libc::close(fd) };
            }
            Ok(())
        }

        fn fd(&self) -> i32 {
            let fd = self.fd.load(Ordering::Acquire);
            assert!(
                fd >= 0,
                "actorium: a closed or unopened parker was used (a worker outlived its pool, \
                 or ran on a row that was never opened)"
            );
            fd
        }

        /// Blocks until `unpark` has been called (possibly before this call).
        pub(crate) fn park(&self) {
            let fd = self.fd();
            let mut value: u64 = 0;
            loop {
                // SAFETY: the buffer is a valid, writable u64, and 8 bytes is its size.
                let n = unsafe { libc::read(fd, (&mut value as *mut u64).cast(), 8) };
                if n == 8 {
                    return;
                }
                let err = io::Error::last_os_error();
                assert_eq!(
                    err.kind(),
                    io::ErrorKind::Interrupted,
                    "eventfd read failed: {err}"
                );
            }
        }

        /// Blocks until `unpark` has been called (possibly before this call) or `limit` has
        /// passed. Returns whether the token was taken (false: timed out, no token taken).
        pub(crate) fn park_timeout(&self, limit: std::time::Duration) -> bool {
            let fd = self.fd();
            let ts = libc::timespec {
                tv_sec: limit.as_secs() as libc::time_t,
                tv_nsec: limit.subsec_nanos() as libc::c_long,
            };
            let mut pfd = libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: `pfd` is one valid pollfd and `ts` a valid timespec, both alive for the
            // call; a null signal mask leaves the thread's mask as it is.
            let n = unsafe { libc::ppoll(&mut pfd, 1, &ts, std::ptr::null()) };
            if n == 0 {
                return false;
            }
            // Readable (or interrupted by a signal: then `park` decides, blocking only if no
            // token is there, which the caller's benaphore protocol then accounts for).
            if n < 0 {
                let err = io::Error::last_os_error();
                assert_eq!(
                    err.kind(),
                    io::ErrorKind::Interrupted,
                    "eventfd poll failed: {err}"
                );
                return false;
            }
            self.park();
            true
        }

        pub(crate) fn unpark(&self) {
            let fd = self.fd();
            let value: u64 = 1;
            loop {
                // SAFETY: the buffer is a valid u64, and 8 bytes is its size.
                let n = unsafe { libc::write(fd, (&value as *const u64).cast(), 8) };
                if n == 8 {
                    return;
                }
                let err = io::Error::last_os_error();
                assert_eq!(
                    err.kind(),
                    io::ErrorKind::Interrupted,
                    "eventfd write failed: {err}"
                );
            }
        }

        /// Closes the descriptor. Only after the worker that parks here has exited: then no
        /// `unpark` can come any more (the benaphore unparks only a worker it saw in SLEEP, and
        /// such an unpark happens before that worker's `park` returns, so before it exits).
        pub(crate) fn close(&self) {
            let fd = self.fd.swap(CLOSED, Ordering::AcqRel);
            if fd >= 0 {
                // SAFETY: `fd` was ours and is closed exactly once (the swap took it).
                unsafe { libc::close(fd) };
            }
        }
    }

    impl Drop for Parker {
        fn drop(&mut self) {
            self.close();
        }
    }
}

#[cfg(any(not(target_os = "linux"), loom, shuttle, actorium_portable_parker))]
mod portable {
    use crate::runtime::loom::sync::{Condvar, Mutex};
    use std::io;

    /// A binary semaphore from a mutex and a condition variable.
    #[derive(Debug)]
    pub(crate) struct Parker {
        token: Mutex<bool>,
        cv: Condvar,
    }

    impl Parker {
        pub(crate) fn unopened() -> Self {
            Self {
                token: Mutex::new(false),
                cv: Condvar::new(),
            }
        }

        /// Nothing to make here.
        pub(crate) fn open(&self) -> io::Result<()> {
            Ok(())
        }

        pub(crate) fn park(&self) {
            let mut token = self.token.lock().unwrap();
            while !*token {
                token = self.cv.wait(token).unwrap();
            }
            *token = false;
        }

        /// Blocks until `unpark` has been called or `limit` has passed; returns whether the
        /// token was taken. Under loom the time-out is taken at once when no token is there,
        /// so the models explore a time-out racing every step of a notifier.
        pub(crate) fn park_timeout(&self, limit: std::time::Duration) -> bool {
            let mut token = self.token.lock().unwrap();
            #[cfg(not(any(loom, shuttle)))]
            if !*token {
                token = self.cv.wait_timeout(token, limit).unwrap().0;
            }
            #[cfg(any(loom, shuttle))]
            let _ = limit;
            std::mem::replace(&mut *token, false)
        }

        pub(crate) fn unpark(&self) {
            *self.token.lock().unwrap() = true;
            self.cv.notify_one();
        }

        /// Nothing to release early here.
        pub(crate) fn close(&self) {}

        /// Whether an `unpark` is waiting for a `park` (the models check none is left over).
        #[cfg(all(test, loom))]
        pub(crate) fn token_pending(&self) -> bool {
            *self.token.lock().unwrap()
        }
    }
}
