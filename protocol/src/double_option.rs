//! Serde helper that tells an absent field from an explicit `null`, so typed
//! sidecar events serialize back to exactly what the program wrote.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

pub(crate) fn serialize<T: Serialize, S: Serializer>(
    value: &Option<Option<T>>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match value {
        // `skip_serializing_if = "Option::is_none"` keeps absent fields absent.
        None => serializer.serialize_none(),
        Some(inner) => inner.serialize(serializer),
    }
}

pub(crate) fn deserialize<'de, T: Deserialize<'de>, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(deserializer).map(Some)
}
