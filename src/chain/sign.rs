//! Ed25519 signatures over a sealed log's head, for `seal --key` and `verify --key`.
//!
//! The chain proves a log is the one sealed up to its head; a signature says who sealed
//! that head. The signed message is the head's 64 lowercase hex digits (ASCII), so any
//! Ed25519 library can check it. Keys are 32 bytes written as 64 hex digits: the secret
//! key is the Ed25519 seed (RFC 8032), the public key its compressed point.

use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};

use super::Digest;

/// Why a key or a signature cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// Not 64 hex digits.
    #[error("a key is 64 hex digits (32 bytes)")]
    MalformedKey,
    /// 32 bytes that are not a point of the curve.
    #[error("the public key is not a valid Ed25519 point")]
    InvalidPublicKey,
    /// Not 128 hex digits.
    #[error("a signature is 128 hex digits (64 bytes)")]
    MalformedSignature,
}

fn hex_bytes<const N: usize>(text: &str) -> Option<[u8; N]> {
    let text = text.trim();
    if text.len() != 2 * N || !text.is_ascii() {
        return None;
    }
    let mut bytes = [0u8; N];
    for (byte, pair) in bytes.iter_mut().zip(text.as_bytes().chunks_exact(2)) {
        let pair = std::str::from_utf8(pair).ok()?;
        *byte = u8::from_str_radix(pair, 16).ok()?;
    }
    Some(bytes)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A secret key read from its 64 hex digits.
pub struct SecretKey(SigningKey);

impl SecretKey {
    /// A secret key from its seed, 64 hex digits (surrounding white space ignored).
    pub fn parse(text: &str) -> Result<SecretKey, KeyError> {
        let seed = hex_bytes::<32>(text).ok_or(KeyError::MalformedKey)?;
        Ok(SecretKey(SigningKey::from_bytes(&seed)))
    }

    /// The public key, as 64 hex digits.
    pub fn public_hex(&self) -> String {
        hex(self.0.verifying_key().as_bytes())
    }

    /// The signature over `head`, as 128 hex digits.
    pub fn sign(&self, head: Digest) -> String {
        hex(&self.0.sign(head.hex().as_bytes()).to_bytes())
    }
}

/// Whether `signature` (128 hex digits) is `public`'s (64 hex digits) over `head`.
pub fn verify_head(public: &str, head: Digest, signature: &str) -> Result<bool, KeyError> {
    let public = hex_bytes::<32>(public).ok_or(KeyError::MalformedKey)?;
    let public = VerifyingKey::from_bytes(&public).map_err(|_| KeyError::InvalidPublicKey)?;
    let signature = hex_bytes::<64>(signature).ok_or(KeyError::MalformedSignature)?;
    let signature = Signature::from_bytes(&signature);
    Ok(public
        .verify_strict(head.hex().as_bytes(), &signature)
        .is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signs_and_verifies_the_head() {
        // RFC 8032 §7.1, test 1: the secret key and its public key.
        let secret = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";
        let public = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";
        let key = SecretKey::parse(secret).expect("a key");
        assert_eq!(key.public_hex(), public);
        let head = Digest::of(b"log");
        let signature = key.sign(head);
        assert_eq!(signature.len(), 128);
        assert_eq!(verify_head(public, head, &signature), Ok(true));
        assert_eq!(
            verify_head(public, Digest::of(b"other"), &signature),
            Ok(false)
        );
        let other = SecretKey::parse(&"11".repeat(32)).expect("a key");
        assert_eq!(
            verify_head(&other.public_hex(), head, &signature),
            Ok(false)
        );
        assert_eq!(
            verify_head("00", head, &signature),
            Err(KeyError::MalformedKey)
        );
        assert_eq!(
            verify_head(public, head, "abc"),
            Err(KeyError::MalformedSignature)
        );
        assert!(SecretKey::parse("not hex").is_err());
    }
}
