//! Corral example plugin: pictures and sounds (image and audio content).

use corral_sdk::{Audio, CallResult, Image, Tool, ToolError, plugin};
use schemars::JsonSchema;
use serde::Deserialize;

/// Largest image side, in pixels.
const MAX_SIZE: u32 = 512;
/// Most iterations per pixel.
const MAX_ITERATIONS: u32 = 1000;
/// WAV sample rate, in Hz.
const SAMPLE_RATE: u32 = 8000;
/// Highest tone frequency (below the 4 kHz Nyquist limit).
const MAX_FREQUENCY: f64 = 3500.0;
/// Lowest tone frequency.
const MIN_FREQUENCY: f64 = 20.0;
/// Longest tone, in milliseconds.
const MAX_DURATION_MS: u32 = 5000;

fn default_size() -> u32 {
    64
}

fn default_iterations() -> u32 {
    100
}

/// Size and detail of the Mandelbrot image.
#[derive(Deserialize, JsonSchema)]
struct MandelbrotArgs {
    /// Image width in pixels (1-512).
    #[serde(default = "default_size")]
    #[schemars(range(min = 1, max = 512))]
    width: u32,
    /// Image height in pixels (1-512).
    #[serde(default = "default_size")]
    #[schemars(range(min = 1, max = 512))]
    height: u32,
    /// Iterations per pixel before a point counts as inside the set
    /// (1-1000); more shows finer detail at the edge.
    #[serde(default = "default_iterations")]
    #[schemars(range(min = 1, max = 1000))]
    max_iterations: u32,
}

/// A tone to synthesize.
#[derive(Deserialize, JsonSchema)]
struct ToneArgs {
    /// Pitch in hertz (20-3500), e.g. 440 for concert A.
    #[schemars(range(min = 20, max = 3500))]
    frequency_hz: f64,
    /// Length in milliseconds (1-5000).
    #[schemars(range(min = 1, max = 5000))]
    duration_ms: u32,
}

/// A colour.
#[derive(Deserialize, JsonSchema)]
struct SwatchArgs {
    /// The colour as a CSS hex code: `#rrggbb` or `#rgb`, the `#` optional.
    #[schemars(regex(pattern = r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$"))]
    hex: String,
}

fn check(name: &str, value: u32, max: u32, unit: &str) -> Result<(), ToolError> {
    if (1..=max).contains(&value) {
        Ok(())
    } else {
        Err(ToolError::new(format!(
            "{name} must be between 1 and {max}{unit}, got {value}"
        )))
    }
}

/// Encodes an RGB image as PNG.
fn png(width: u32, height: u32, rgb: &[u8]) -> Result<Vec<u8>, ToolError> {
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_compression(png::Compression::Balanced);
    let encode = move || -> Result<(), png::EncodingError> {
        let mut writer = encoder.write_header()?;
        writer.write_image_data(rgb)?;
        writer.finish()
    };
    encode().map_err(|e| ToolError::new(format!("could not encode the PNG: {e}")))?;
    Ok(out)
}

/// A colour for a point that escaped after `n` of `max` iterations
/// (black inside the set).
fn palette(n: u32, max: u32) -> [u8; 3] {
    if n >= max {
        return [0, 0, 0];
    }
    // The square root spreads the many quickly escaping points over more
    // of the palette.
    let t = (f64::from(n) / f64::from(max)).sqrt();
    let channel = |x: f64| (x.clamp(0.0, 1.0) * 255.0) as u8;
    // Bernstein polynomials: dark blue through orange to pale yellow.
    [
        channel(9.0 * (1.0 - t) * t * t * t),
        channel(15.0 * (1.0 - t) * (1.0 - t) * t * t),
        channel(8.5 * (1.0 - t) * (1.0 - t) * (1.0 - t) * t),
    ]
}

fn mandelbrot(args: MandelbrotArgs) -> Result<Image, ToolError> {
    let MandelbrotArgs {
        width,
        height,
        max_iterations,
    } = args;
    check("width", width, MAX_SIZE, " pixels")?;
    check("height", height, MAX_SIZE, " pixels")?;
    check("max_iterations", max_iterations, MAX_ITERATIONS, "")?;
    // Fit the region re in [-2.2, 0.8], im in [-1.2, 1.2] into the image,
    // keeping pixels square.
    let scale = (3.0 / f64::from(width)).max(2.4 / f64::from(height));
    let (center_re, center_im) = (-0.7, 0.0);
    let mut rgb = Vec::with_capacity((width * height * 3) as usize);
    for y in 0..height {
        let im = center_im + (f64::from(y) - f64::from(height) / 2.0) * scale;
        for x in 0..width {
            let re = center_re + (f64::from(x) - f64::from(width) / 2.0) * scale;
            let (mut zr, mut zi, mut n) = (0.0f64, 0.0f64, 0);
            while n < max_iterations && zr * zr + zi * zi <= 4.0 {
                (zr, zi) = (zr * zr - zi * zi + re, 2.0 * zr * zi + im);
                n += 1;
            }
            rgb.extend_from_slice(&palette(n, max_iterations));
        }
    }
    Ok(Image::png(png(width, height, &rgb)?))
}

/// Writes a 8 kHz, 8-bit, mono PCM WAV file.
fn wav(samples: &[u8]) -> Vec<u8> {
    let data_len = samples.len() as u32;
    let mut out = Vec::with_capacity(44 + samples.len());
    out.extend_from_slice(b"RIFF");
    out.extend_from_slice(&(36 + data_len).to_le_bytes());
    out.extend_from_slice(b"WAVE");
    out.extend_from_slice(b"fmt ");
    out.extend_from_slice(&16u32.to_le_bytes()); // fmt chunk size
    out.extend_from_slice(&1u16.to_le_bytes()); // PCM
    out.extend_from_slice(&1u16.to_le_bytes()); // mono
    out.extend_from_slice(&SAMPLE_RATE.to_le_bytes());
    out.extend_from_slice(&SAMPLE_RATE.to_le_bytes()); // bytes per second
    out.extend_from_slice(&1u16.to_le_bytes()); // bytes per frame
    out.extend_from_slice(&8u16.to_le_bytes()); // bits per sample
    out.extend_from_slice(b"data");
    out.extend_from_slice(&data_len.to_le_bytes());
    out.extend_from_slice(samples);
    out
}

fn tone(args: ToneArgs) -> Result<Audio, ToolError> {
    let ToneArgs {
        frequency_hz,
        duration_ms,
    } = args;
    if !(MIN_FREQUENCY..=MAX_FREQUENCY).contains(&frequency_hz) {
        return Err(ToolError::new(format!(
            "frequency_hz must be between {MIN_FREQUENCY} and {MAX_FREQUENCY}, got {frequency_hz}"
        )));
    }
    check("duration_ms", duration_ms, MAX_DURATION_MS, " ms")?;
    let count = (u64::from(SAMPLE_RATE) * u64::from(duration_ms) / 1000).max(1) as usize;
    // 5 ms fades at both ends avoid clicks.
    let fade = (SAMPLE_RATE as usize / 200).min(count / 2).max(1);
    let samples: Vec<u8> = (0..count)
        .map(|i| {
            let t = i as f64 / f64::from(SAMPLE_RATE);
            let envelope = (i.min(count - 1 - i) as f64 / fade as f64).min(1.0);
            let value = (2.0 * std::f64::consts::PI * frequency_hz * t).sin() * envelope;
            (128.0 + 100.0 * value).round() as u8
        })
        .collect();
    Ok(Audio::wav(wav(&samples)))
}

/// Parses `#rgb` / `#rrggbb` (with or without `#`).
fn parse_hex(hex: &str) -> Option<[u8; 3]> {
    let digits = hex.strip_prefix('#').unwrap_or(hex);
    if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let nibble = |i: usize| u8::from_str_radix(&digits[i..=i], 16).ok();
    match digits.len() {
        3 => Some([nibble(0)? * 17, nibble(1)? * 17, nibble(2)? * 17]),
        6 => {
            let byte = |i: usize| u8::from_str_radix(&digits[i..i + 2], 16).ok();
            Some([byte(0)?, byte(2)?, byte(4)?])
        }
        _ => None,
    }
}

fn swatch(args: SwatchArgs) -> Result<CallResult, ToolError> {
    let [r, g, b] = parse_hex(&args.hex).ok_or_else(|| {
        ToolError::new(format!(
            "{:?} is not a hex colour: use #rrggbb or #rgb, e.g. #ff8800",
            args.hex
        ))
    })?;
    const SIDE: u32 = 32;
    let rgb = [r, g, b].repeat((SIDE * SIDE) as usize);
    Ok(CallResult::new()
        .image(png(SIDE, SIDE, &rgb)?, "image/png")
        .text(format!(
            "A {SIDE}x{SIDE} swatch of #{r:02x}{g:02x}{b:02x} (rgb({r}, {g}, {b}))."
        )))
}

plugin! {
    Tool::new("mandelbrot", mandelbrot)
        .title("Mandelbrot set")
        .description(
            "Render the Mandelbrot set as a PNG image (the whole set, centred). \
             All arguments are optional: width and height default to 64 pixels \
             (at most 512 each), max_iterations to 100 (at most 1000).",
        )
        .read_only()
        .idempotent()
        .closed_world(),
    Tool::new("tone", tone)
        .title("Tone generator")
        .description(
            "Synthesize a pure sine tone as WAV audio (8 kHz, 8-bit, mono). \
             frequency_hz is 20-3500 Hz, duration_ms is 1-5000 ms.",
        )
        .read_only()
        .idempotent()
        .closed_world(),
    Tool::new("swatch", swatch)
        .title("Colour swatch")
        .description(
            "Show a colour: returns a small solid-colour PNG image of a CSS hex colour \
             (#rrggbb or #rgb) and a text line with its normalized hex and RGB values.",
        )
        .read_only()
        .idempotent()
        .closed_world(),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mandelbrot_png() {
        let image = mandelbrot(MandelbrotArgs {
            width: 40,
            height: 30,
            max_iterations: 50,
        })
        .unwrap();
        assert_eq!(image.mime_type, "image/png");
        assert_eq!(&image.data[..8], b"\x89PNG\r\n\x1a\n");
        assert!(
            mandelbrot(MandelbrotArgs {
                width: 513,
                height: 1,
                max_iterations: 1
            })
            .is_err()
        );
    }

    #[test]
    fn tone_wav() {
        let audio = tone(ToneArgs {
            frequency_hz: 440.0,
            duration_ms: 250,
        })
        .unwrap();
        assert_eq!(audio.mime_type, "audio/wav");
        assert_eq!(&audio.data[..4], b"RIFF");
        assert_eq!(audio.data.len(), 44 + 2000);
        assert!(
            tone(ToneArgs {
                frequency_hz: 5000.0,
                duration_ms: 10
            })
            .is_err()
        );
    }

    #[test]
    fn hex() {
        assert_eq!(parse_hex("#ff8800"), Some([255, 136, 0]));
        assert_eq!(parse_hex("abc"), Some([170, 187, 204]));
        assert_eq!(parse_hex("#12345"), None);
        assert_eq!(parse_hex("#ggg"), None);
        assert_eq!(parse_hex("#éé"), None);
    }

    #[test]
    fn schemas() {
        let tools = __corral_tools();
        let schema = tools[0].input_schema();
        assert_eq!(schema["properties"]["width"]["default"], 64);
        assert_eq!(schema["properties"]["width"]["maximum"], 512);
        assert!(schema.get("required").is_none());
    }
}
