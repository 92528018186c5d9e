//! ACP v1 protocol types.
//!
//! The typed model is the official `agent-client-protocol-schema` crate,
//! re-exported whole as [`official`] and its v1 types as [`v1`], so that
//! hosts use the same types as the official SDKs. Its decoding is strict in places (an unknown
//! `session/update` variant is an error; unknown fields are dropped), so the
//! engine never decodes on the host's behalf: every incoming payload stays
//! raw JSON, and [`Tolerant`] gives a typed view *beside* the raw text
//! instead of in place of it.

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

pub use agent_client_protocol_schema as official;
/// The ACP v1 types, plus the version type that lives at the crate root.
pub mod v1 {
    pub use agent_client_protocol_schema::v1::*;
    pub use agent_client_protocol_schema::{
        IntoMaybeUndefined, IntoOption, MaybeUndefined, ProtocolVersion,
    };
}

/// A payload decoded as `T` where possible, always kept as raw JSON.
///
/// Unknown fields, enum values and `session/update` variants reach the host
/// intact through [`Tolerant::raw`]; [`Tolerant::typed`] is `None` only when
/// `T` cannot represent the payload (for example a variant newer than the
/// schema crate), never because of an extra field.
#[derive(Debug)]
pub struct Tolerant<T> {
    raw: Box<RawValue>,
    typed: Result<T, String>,
}

impl<T: DeserializeOwned> Tolerant<T> {
    /// Decodes `raw`, keeping it whatever the outcome.
    pub fn decode(raw: Box<RawValue>) -> Self {
        let typed = T::deserialize(&*raw).map_err(|e| e.to_string());
        Self { raw, typed }
    }
}

impl<T> Tolerant<T> {
    /// The payload exactly as received.
    pub fn raw(&self) -> &RawValue {
        &self.raw
    }

    /// The typed view, if `T` could represent the payload.
    pub fn typed(&self) -> Option<&T> {
        self.typed.as_ref().ok()
    }

    /// Why the typed view is missing, if it is.
    pub fn decode_error(&self) -> Option<&str> {
        self.typed.as_ref().err().map(String::as_str)
    }

    /// Splits into the raw text and the typed view.
    pub fn into_parts(self) -> (Box<RawValue>, Option<T>) {
        (self.raw, self.typed.ok())
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Tolerant<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Self::decode(Box::<RawValue>::deserialize(d)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use v1::{SessionNotification, SessionUpdate};

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_owned()).expect("json")
    }

    #[test]
    fn known_update_decodes_and_keeps_unknown_fields_in_raw() {
        let text = r#"{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"},"vendorField":7},"_meta":{"x":1}}"#;
        let t = Tolerant::<SessionNotification>::decode(raw(text));
        let typed = t.typed().expect("typed");
        assert!(matches!(typed.update, SessionUpdate::AgentMessageChunk(_)));
        assert_eq!(t.raw().get(), text);
    }

    #[test]
    fn unknown_update_variant_is_kept_raw_not_dropped() {
        let text = r#"{"sessionId":"s1","update":{"sessionUpdate":"hologram","frames":[1,2]}}"#;
        let t = Tolerant::<SessionNotification>::decode(raw(text));
        assert!(t.typed().is_none());
        assert!(t.decode_error().is_some());
        assert_eq!(t.raw().get(), text);
    }
}
