//! Prompt attachments: base64 (the wire form of image and audio content
//! blocks) and MIME types from file extensions.

/// Image or audio.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MediaKind {
    /// An `image` content block.
    Image,
    /// An `audio` content block.
    Audio,
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with padding.
pub fn base64_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// How many bytes standard padded base64 `text` decodes to; `None` when it
/// is not valid base64.
pub fn base64_decoded_len(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    if !bytes.len().is_multiple_of(4) {
        return None;
    }
    let padding = bytes.iter().rev().take_while(|&&b| b == b'=').count();
    let body = &bytes[..bytes.len() - padding];
    if padding > 2 || !body.iter().all(|b| ALPHABET.contains(b)) {
        return None;
    }
    Some(bytes.len() / 4 * 3 - padding)
}

/// The MIME type of a file of `kind`, from its extension.
pub fn mime_type(kind: MediaKind, path: &std::path::Path) -> Option<&'static str> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    let mime = match (kind, ext.as_str()) {
        (MediaKind::Image, "png") => "image/png",
        (MediaKind::Image, "jpg" | "jpeg") => "image/jpeg",
        (MediaKind::Image, "gif") => "image/gif",
        (MediaKind::Image, "webp") => "image/webp",
        (MediaKind::Image, "svg") => "image/svg+xml",
        (MediaKind::Audio, "wav") => "audio/wav",
        (MediaKind::Audio, "mp3") => "audio/mpeg",
        (MediaKind::Audio, "ogg" | "oga") => "audio/ogg",
        (MediaKind::Audio, "flac") => "audio/flac",
        (MediaKind::Audio, "m4a") => "audio/mp4",
        (MediaKind::Audio, "webm") => "audio/webm",
        _ => return None,
    };
    Some(mime)
}

/// The extensions [`mime_type`] knows for `kind`, for error messages.
pub fn known_extensions(kind: MediaKind) -> &'static str {
    match kind {
        MediaKind::Image => ".png, .jpg, .jpeg, .gif, .webp, .svg",
        MediaKind::Audio => ".wav, .mp3, .ogg, .oga, .flac, .m4a, .webm",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips_lengths() {
        for (input, encoded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64_encode(input.as_bytes()), encoded);
            assert_eq!(base64_decoded_len(encoded), Some(input.len()));
        }
        assert_eq!(base64_encode(&[0xff, 0xfe, 0x00]), "//4A");
        assert_eq!(base64_decoded_len("Zm9"), None);
        assert_eq!(base64_decoded_len("Zm9*"), None);
        assert_eq!(base64_decoded_len("Z==="), None);
    }

    #[test]
    fn mime_types_by_extension() {
        let p = std::path::Path::new;
        assert_eq!(mime_type(MediaKind::Image, p("a/b.PNG")), Some("image/png"));
        assert_eq!(mime_type(MediaKind::Audio, p("x.wav")), Some("audio/wav"));
        assert_eq!(mime_type(MediaKind::Image, p("x.wav")), None);
        assert_eq!(mime_type(MediaKind::Audio, p("noext")), None);
    }
}
