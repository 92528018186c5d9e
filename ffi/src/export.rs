//! The one shape of every export. An exported function is a signature and
//! a doc (what cbindgen puts in the header) around one call to a wrapper
//! here; its body is ordinary Rust returning `Result<_, acp_error>`:
//!
//! ```ignore
//! pub unsafe extern "C" fn acp_connection_notify(
//!     conn: *const acp_connection, method: acp_str, params: acp_str,
//!     error: *mut *mut acp_error,
//! ) -> acp_status {
//!     // SAFETY: `conn`, the strings and `error` are as this function's
//!     // `# Safety` says.
//!     unsafe {
//!         export::status(error, || {
//!             let c = export::arg(conn, "conn")?;
//!             let method = method.to_str()?;
//!             ...
//!         })
//!     }
//! }
//! ```
//!
//! The wrappers, by the export's shape:
//! * [`status`]: returns `acp_status`; a failure fills `*error`;
//! * [`output`]: the same, plus an out-param ([`Out`]) that is checked
//!   before the body runs and written **only** when it succeeds;
//! * [`value`]: a getter that returns a value, not a status (NULL
//!   arguments and panics give its fallback); [`get`] and [`get_text`]
//!   are the common getters of one object;
//! * [`free`], [`free_with`]: a `_free` (NULL is ignored).
//!
//! Each catches panics ([`std::panic::catch_unwind`]): a panic never
//! crosses the boundary, it becomes `ACP_ERR_PANIC` (with the panic's
//! message in `*error`) or the fallback. Pointer arguments go through
//! typed casts: [`arg`]/[`arg_mut`] borrow (NULL is
//! `ACP_ERR_NULL_ARGUMENT`, naming the argument), [`slice_arg`] borrows an
//! array, and objects handed to C are [`Owned`]: boxed on the way out by
//! [`Out`], taken back once by [`free`].
//!
//! The unsafe part of an export is therefore one block: its `SAFETY`
//! comment says which of the function's preconditions make the casts
//! sound (the closure runs inside that block).

use std::any::Any;
use std::ffi::c_char;
use std::marker::PhantomData;
use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::error::acp_error;
use crate::status::acp_status;

/// An object libacp hands to C as `Box::into_raw` and takes back once, in
/// its `_free`. Only these can be written to an object out-param or freed
/// by [`free`].
pub(crate) trait Owned: Sized {}

/// No `acp_error **error` parameter: failures are the status alone.
pub(crate) const NO_ERROR: *mut *mut acp_error = std::ptr::null_mut();

/// The error of a NULL pointer where `name` is required.
pub(crate) fn null_argument(name: &str) -> acp_error {
    acp_error::new(
        acp_status::ACP_ERR_NULL_ARGUMENT,
        format!("`{name}` is NULL"),
    )
}

/// Borrows the object behind argument `name`.
///
/// # Safety
/// `ptr` is NULL or points to a live `T` that no one mutates for `'a`.
pub(crate) unsafe fn arg<'a, T>(ptr: *const T, name: &str) -> Result<&'a T, acp_error> {
    // SAFETY: NULL or live, per this function's contract.
    unsafe { ptr.as_ref() }.ok_or_else(|| null_argument(name))
}

/// Borrows the object behind argument `name` for the call alone.
///
/// # Safety
/// `ptr` is NULL or points to a live `T` that no one else uses for `'a`.
pub(crate) unsafe fn arg_mut<'a, T>(ptr: *mut T, name: &str) -> Result<&'a mut T, acp_error> {
    // SAFETY: NULL or live and not shared, per this function's contract.
    unsafe { ptr.as_mut() }.ok_or_else(|| null_argument(name))
}

/// Borrows the array argument `name` of `len` entries (NULL is an empty
/// array when `len` is 0).
///
/// # Safety
/// `ptr` is NULL or valid for `len` reads of `T` for `'a`.
pub(crate) unsafe fn slice_arg<'a, T>(
    ptr: *const T,
    len: usize,
    name: &str,
) -> Result<&'a [T], acp_error> {
    match (ptr.is_null(), len) {
        (_, 0) => Ok(&[]),
        (true, _) => Err(null_argument(name)),
        // SAFETY: non-NULL and valid for `len` entries, per the contract.
        (false, _) => Ok(unsafe { std::slice::from_raw_parts(ptr, len) }),
    }
}

/// An out-param: where an export writes what it produced, on success only.
pub(crate) trait Out {
    /// What is written.
    type Value;
    /// The parameter the caller gave as NULL where the value must go.
    fn missing(&self) -> Option<&'static str>;
    /// Writes the value.
    ///
    /// # Safety
    /// Nothing [`Out::missing`], and the pointers are valid for writes.
    unsafe fn write(self, value: Self::Value);
}

/// An object out-param (`T **out`): receives an owned object.
impl<T: Owned> Out for *mut *mut T {
    type Value = Box<T>;
    fn missing(&self) -> Option<&'static str> {
        self.is_null().then_some("out")
    }
    unsafe fn write(self, value: Box<T>) {
        // SAFETY: non-NULL and valid, per `write`'s contract.
        unsafe { *self = Box::into_raw(value) };
    }
}

/// An out-param the caller may leave NULL (it does not want the value).
pub(crate) struct Optional<O>(pub(crate) O);

impl<T: Owned> Out for Optional<*mut *mut T> {
    type Value = Box<T>;
    fn missing(&self) -> Option<&'static str> {
        None
    }
    unsafe fn write(self, value: Box<T>) {
        if !self.0.is_null() {
            // SAFETY: non-NULL, and valid per `write`'s contract.
            unsafe { Out::write(self.0, value) };
        }
    }
}

/// A borrowed text out-param (`const char **out, size_t *out_len`): the
/// text stays owned by the object it came from; `None` writes NULL and 0.
pub(crate) struct Text<'a> {
    ptr: *mut *const c_char,
    len: *mut usize,
    borrowed: PhantomData<&'a str>,
}

/// The text out-param `out`, `out_len`.
pub(crate) fn text<'a>(out: *mut *const c_char, out_len: *mut usize) -> Text<'a> {
    Text {
        ptr: out,
        len: out_len,
        borrowed: PhantomData,
    }
}

impl<'a> Out for Text<'a> {
    type Value = Option<&'a str>;
    fn missing(&self) -> Option<&'static str> {
        if self.ptr.is_null() {
            Some("out")
        } else if self.len.is_null() {
            Some("out_len")
        } else {
            None
        }
    }
    unsafe fn write(self, value: Option<&'a str>) {
        let (ptr, len) = value.map_or((std::ptr::null(), 0), |s| (s.as_ptr().cast(), s.len()));
        // SAFETY: both non-NULL and valid, per `write`'s contract.
        unsafe {
            *self.ptr = ptr;
            *self.len = len;
        }
    }
}

/// Writes `e` to `*error` (when `error` is not NULL) and returns its status.
///
/// # Safety
/// `error` is NULL or valid for one pointer write.
pub(crate) unsafe fn fail(error: *mut *mut acp_error, e: acp_error) -> acp_status {
    let status = e.status;
    if !error.is_null() {
        // SAFETY: non-NULL and valid, per this function's contract.
        unsafe { *error = Box::into_raw(Box::new(e)) };
    }
    status
}

/// The error of a caught panic (a libacp bug).
fn panicked(payload: &(dyn Any + Send)) -> acp_error {
    let what = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("a panic");
    acp_error::new(
        acp_status::ACP_ERR_PANIC,
        format!("libacp bug (please report it): {what}"),
    )
}

/// An export returning `acp_status`: `ACP_OK` when `body` succeeds;
/// otherwise its error's status, and the error in `*error`. A panic is
/// `ACP_ERR_PANIC`.
///
/// # Safety
/// `error` is NULL or valid for one pointer write.
pub(crate) unsafe fn status(
    error: *mut *mut acp_error,
    body: impl FnOnce() -> Result<(), acp_error>,
) -> acp_status {
    let outcome = catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|p| Err(panicked(&*p)));
    match outcome {
        Ok(()) => acp_status::ACP_OK,
        // SAFETY: per this function's contract.
        Err(e) => unsafe { fail(error, e) },
    }
}

/// As [`status`], with an out-param: a missing `out` fails before `body`
/// runs (nothing is done), and `out` is written only when `body` succeeds.
///
/// # Safety
/// As [`status`]; `out` is missing or valid for its writes.
pub(crate) unsafe fn output<O: Out>(
    out: O,
    error: *mut *mut acp_error,
    body: impl FnOnce() -> Result<O::Value, acp_error>,
) -> acp_status {
    // SAFETY: per this function's contract.
    unsafe {
        status(error, || {
            if let Some(name) = out.missing() {
                return Err(null_argument(name));
            }
            let value = body()?;
            // SAFETY: not missing, and valid per the contract.
            out.write(value);
            Ok(())
        })
    }
}

/// An export returning a value rather than a status (a getter): what
/// `body` gives, or `fallback` when it gives nothing (a NULL argument) or
/// panics.
pub(crate) fn value<T>(fallback: T, body: impl FnOnce() -> Option<T>) -> T {
    catch_unwind(AssertUnwindSafe(body))
        .ok()
        .flatten()
        .unwrap_or(fallback)
}

/// A getter returning a value: `f` of the object behind `ptr`, or
/// `fallback` for NULL (or a panic).
///
/// # Safety
/// `ptr` is NULL or points to a live `T` that no one mutates meanwhile.
pub(crate) unsafe fn get<T, V>(ptr: *const T, fallback: V, f: impl FnOnce(&T) -> V) -> V {
    value(fallback, || {
        // SAFETY: per this function's contract.
        let object = unsafe { ptr.as_ref() }?;
        Some(f(object))
    })
}

/// A getter of text borrowed from the object behind `ptr` (`None` writes
/// NULL and 0), for functions without an `error` parameter.
///
/// # Safety
/// As [`get`]; `out` and `out_len` are NULL or valid for writes.
pub(crate) unsafe fn get_text<T>(
    ptr: *const T,
    out: *mut *const c_char,
    out_len: *mut usize,
    f: impl FnOnce(&T) -> Option<&str>,
) -> acp_status {
    // SAFETY: per this function's contract.
    unsafe { output(text(out, out_len), NO_ERROR, || Ok(f(arg(ptr, "object")?))) }
}

/// A `_free`: drops the object; NULL is ignored.
///
/// # Safety
/// `ptr` is NULL or was handed out by libacp as an owned `T`, and is freed
/// once.
pub(crate) unsafe fn free<T: Owned>(ptr: *mut T) {
    // SAFETY: per this function's contract.
    unsafe { free_with(ptr, drop) };
}

/// A `_free` that does more than drop: `f` gets the object back; NULL is
/// ignored.
///
/// # Safety
/// As [`free`].
pub(crate) unsafe fn free_with<T: Owned>(ptr: *mut T, f: impl FnOnce(Box<T>)) {
    if ptr.is_null() {
        return;
    }
    // SAFETY: handed out with Box::into_raw and freed once, per the
    // contract.
    let owned = unsafe { Box::from_raw(ptr) };
    // A panic while dropping is caught; what it leaves is leaked.
    let _ = catch_unwind(AssertUnwindSafe(|| f(owned)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq)]
    struct Thing(u32);
    impl Owned for Thing {}

    #[test]
    fn an_out_param_is_written_only_on_success() {
        let mut slot: *mut Thing = std::ptr::null_mut();
        let mut error: *mut acp_error = std::ptr::null_mut();
        // SAFETY: both out-params point to locals.
        let st = unsafe {
            output(&raw mut slot, &raw mut error, || {
                Err(acp_error::new(acp_status::ACP_ERR_IO, "no"))
            })
        };
        assert_eq!(st, acp_status::ACP_ERR_IO);
        assert!(slot.is_null());
        // SAFETY: filled by `output` with an owned error.
        let e = unsafe { Box::from_raw(error) };
        assert_eq!(
            (e.status, e.message.as_str()),
            (acp_status::ACP_ERR_IO, "no")
        );

        // SAFETY: as above.
        let st = unsafe { output(&raw mut slot, NO_ERROR, || Ok(Box::new(Thing(7)))) };
        assert_eq!(st, acp_status::ACP_OK);
        // SAFETY: written with an owned Thing.
        assert_eq!(*unsafe { Box::from_raw(slot) }, Thing(7));
    }

    #[test]
    fn a_missing_out_param_fails_before_the_body_runs() {
        let mut ran = false;
        let mut error: *mut acp_error = std::ptr::null_mut();
        // SAFETY: `error` points to a local; the out-param is NULL.
        let st = unsafe {
            output(std::ptr::null_mut::<*mut Thing>(), &raw mut error, || {
                ran = true;
                Ok(Box::new(Thing(1)))
            })
        };
        assert_eq!(st, acp_status::ACP_ERR_NULL_ARGUMENT);
        assert!(!ran);
        // SAFETY: filled by `output`.
        let e = unsafe { Box::from_raw(error) };
        assert_eq!(e.message, "`out` is NULL");
    }

    #[test]
    fn a_panic_is_a_status_with_its_message_or_the_fallback() {
        let mut error: *mut acp_error = std::ptr::null_mut();
        // SAFETY: `error` points to a local.
        let st = unsafe { status(&raw mut error, || panic!("boom")) };
        assert_eq!(st, acp_status::ACP_ERR_PANIC);
        // SAFETY: filled by `status`.
        let e = unsafe { Box::from_raw(error) };
        assert!(e.message.contains("boom"), "{}", e.message);
        assert_eq!(value(-1, || panic!("boom")), -1);
        assert_eq!(value(-1, || None), -1);
        assert_eq!(value(-1, || Some(3)), 3);
    }

    #[test]
    fn a_text_out_param_borrows_and_writes_null_for_none() {
        let (mut p, mut n): (*const c_char, usize) = (std::ptr::null(), 9);
        let owner = String::from("hello");
        // SAFETY: both point to locals.
        let st = unsafe {
            output(text(&raw mut p, &raw mut n), NO_ERROR, || {
                Ok(Some(&owner[..]))
            })
        };
        assert_eq!((st, p, n), (acp_status::ACP_OK, owner.as_ptr().cast(), 5));
        // SAFETY: as above.
        let st = unsafe { output(text(&raw mut p, &raw mut n), NO_ERROR, || Ok(None)) };
        assert_eq!((st, p.is_null(), n), (acp_status::ACP_OK, true, 0));
        // SAFETY: the length out-param is missing; nothing is written.
        let st = unsafe {
            output(text(&raw mut p, std::ptr::null_mut()), NO_ERROR, || {
                Ok(Some("x"))
            })
        };
        assert_eq!((st, p.is_null()), (acp_status::ACP_ERR_NULL_ARGUMENT, true));
    }

    #[test]
    fn an_array_argument_may_be_null_only_when_empty() {
        // SAFETY: NULL with 0 entries, and NULL with 2 (refused unread).
        let (empty, refused) = unsafe {
            (
                slice_arg(std::ptr::null::<u8>(), 0, "args"),
                slice_arg(std::ptr::null::<u8>(), 2, "args"),
            )
        };
        assert_eq!(empty.map(<[u8]>::len).ok(), Some(0));
        assert_eq!(
            refused.map_err(|e| e.message).err().as_deref(),
            Some("`args` is NULL")
        );
    }
}
