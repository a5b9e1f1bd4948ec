// Image helpers for card parsing (sharp): what an upload really is, its MD5, and the normalised
// PNG that the AI and OCR parsers read (upright, bounded size, greyscale, contrast stretched).
import { Data } from "effect"
import sharp from "sharp"

import { errorMessage } from "../domain/text.js"

export { md5Hex } from "../domain/signing.js"

export type ImageType = "jpeg" | "png"

/** Grey levels below this count as ink (ruled lines, text-height estimate). */
const INK = 140

/**
 * Decoding refuses images with more pixels than this (decompression bombs). 100 M pixels admits
 * the full-resolution photos of 48–108 MP phone cameras; a 10 MiB file cannot be a real photo
 * much larger than that.
 */
export const MAX_INPUT_PIXELS = 100_000_000
/** The longest side of a normalised image, px (never exceeded). */
export const DEFAULT_MAX_SIDE = 2000
/** Small images are enlarged until their shorter side reaches this, px (OCR reads small text badly). */
export const DEFAULT_MIN_SHORT_SIDE = 1000

/**
 * Why an image was refused; every reason is the client's fault (HTTP 400):
 * - `not_an_image`: not a JPEG or PNG (a GIF, text, anything sharp does not read as one of them);
 * - `too_many_pixels`: more than MAX_INPUT_PIXELS pixels (width × height);
 * - `corrupt`: a JPEG/PNG header but data that does not decode (truncated, damaged).
 */
export type ImageErrorReason = "not_an_image" | "too_many_pixels" | "corrupt"

export class ImageError extends Data.TaggedError("ImageError")<{
  readonly reason: ImageErrorReason
  readonly message: string
  readonly cause?: unknown
}> {}

const isJpegMagic = (b: Uint8Array): boolean => b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff

const PNG_MAGIC = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] as const
const isPngMagic = (b: Uint8Array): boolean => b.length >= 8 && PNG_MAGIC.every((v, i) => b[i] === v)

/** The type the first bytes announce (magic numbers only, no decoding); null for anything else. */
export const sniffImageType = (bytes: Uint8Array): ImageType | null => isJpegMagic(bytes) ? "jpeg" : isPngMagic(bytes) ? "png" : null

/** Header only (nothing is decoded), so no pixel limit: a huge image is still a PNG, refused later. */
const readMetadata = (bytes: Uint8Array): Promise<sharp.Metadata | null> =>
  sharp(bytes, { limitInputPixels: false, failOn: "error" }).metadata().catch(() => null)

/**
 * The type of an image judged by its content: the magic bytes must say JPEG or PNG AND sharp must
 * read the header as that same format. Anything else (a GIF or text named `.jpg`, a PNG signature
 * followed by garbage) is null. The file name and declared content type play no part.
 * Async because sharp reads metadata asynchronously; it never rejects.
 */
export const detectImageType = async (bytes: Uint8Array): Promise<ImageType | null> => {
  const sniffed = sniffImageType(bytes)
  if (sniffed === null) return null
  const meta = await readMetadata(bytes)
  return meta?.format === sniffed && (meta.width ?? 0) > 0 && (meta.height ?? 0) > 0 ? sniffed : null
}

export interface NormalizeOptions {
  /** Longest side of the output, px; default DEFAULT_MAX_SIDE (2000). */
  readonly maxSide?: number
  /** Shorter side small images are enlarged to, px; default DEFAULT_MIN_SHORT_SIDE (1000). */
  readonly minShortSide?: number
  /** Erase table rules and borders (see removeRuledLines); default true. */
  readonly removeLines?: boolean
  /**
   * Rescale so that lines of text are about this tall, px (see estimateTextHeight); default
   * OCR_TEXT_HEIGHT. null: keep the size from maxSide/minShortSide (the AI's image).
   */
  readonly textHeight?: number | null
}

/**
 * The line height tesseract reads Chinese best at, px. Measured on the three fixture cards (fields
 * read correctly out of 34, by target line height; best_int model, 4.0.0 in brackets):
 * 18 → 30 (30), 20 → 31 (31), 22 → 33 (31), 24 → 30 (32), 26 → 34 (34), 28 → 34 (34), 30 → 33 (32),
 * 32 → 32 (32), 36 → 33 (34), 40 → 33 (33), 44 → 33 (32), 48 → 31 (32). Without this step (text
 * as drawn, 32–39 px here) results swing with every small change of size.
 */
export const OCR_TEXT_HEIGHT = 26
/** Text-height rescaling stays within these factors (a wrong estimate does little harm). */
const MIN_TEXT_RESCALE = 0.4
const MAX_TEXT_RESCALE = 3

/**
 * The typical height of a line of text in a greyscale image (one byte per pixel), px; null when
 * no text-like rows are found. The image is cut into 4 vertical strips (so that a slightly tilted
 * line stays a band of rows within a strip); in each strip, runs of rows containing ink are
 * bands of text; the median band height (bands of 8 px or more, isolated specks ignored) is taken.
 */
export const estimateTextHeight = (pixels: Uint8Array, width: number, height: number): number | null => {
  const strips = 4
  const bands: Array<number> = []
  const stripWidth = Math.floor(width / strips)
  if (stripWidth < 10) return null
  const minInk = Math.max(2, Math.round(stripWidth * 0.005))
  for (let s = 0; s < strips; s++) {
    const x0 = s * stripWidth
    let start = -1
    let gap = 0
    for (let y = 0; y <= height; y++) {
      let ink = 0
      if (y < height) {
        const row = y * width + x0
        for (let x = 0; x < stripWidth; x++) if (pixels[row + x]! < INK) ink++
      }
      if (ink >= minInk) {
        if (start < 0) start = y
        gap = 0
      } else if (start >= 0) {
        // Allow a 1–2 px gap inside a character (the two parts of 二, 三 …).
        if (++gap > 2 || y === height) {
          const h = y - gap + 1 - start
          if (h >= 8) bands.push(h)
          start = -1
          gap = 0
        }
      }
    }
  }
  if (bands.length === 0) return null
  bands.sort((a, b) => a - b)
  return bands[Math.floor(bands.length / 2)]!
}

/**
 * Table rules and borders erased from a greyscale image (one byte per pixel): every horizontal or
 * vertical run of ink at least `minRun` px long (default: 120 px or 6% of the longest side,
 * whichever is more — longer than any stroke of a character at card sizes) is painted white with
 * a one-pixel margin. tesseract reads a ruled table as noise; without the rules it reads the cells
 * as lines of text (`姓名 陈思远 性别 男`).
 */
export const removeRuledLines = (
  pixels: Uint8Array,
  width: number,
  height: number,
  minRun = Math.max(120, Math.round(0.06 * Math.max(width, height)))
): Buffer => {
  const erase = new Uint8Array(width * height)
  for (let y = 0; y < height; y++) {
    let start = -1
    for (let x = 0; x <= width; x++) {
      const ink = x < width && pixels[y * width + x]! < INK
      if (ink && start < 0) start = x
      else if (!ink && start >= 0) {
        if (x - start >= minRun) erase.fill(1, y * width + start, y * width + x)
        start = -1
      }
    }
  }
  for (let x = 0; x < width; x++) {
    let start = -1
    for (let y = 0; y <= height; y++) {
      const ink = y < height && pixels[y * width + x]! < INK
      if (ink && start < 0) start = y
      else if (!ink && start >= 0) {
        if (y - start >= minRun) { for (let k = start; k < y; k++) erase[k * width + x] = 1 }
        start = -1
      }
    }
  }
  const out = Buffer.from(pixels)
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      if (erase[y * width + x] === 0) continue
      for (let yy = Math.max(0, y - 1); yy <= Math.min(height - 1, y + 1); yy++) {
        out.fill(255, yy * width + Math.max(0, x - 1), yy * width + Math.min(width - 1, x + 1) + 1)
      }
    }
  }
  return out
}

/** The factor that brings (width, height) within the bounds: shrink first, enlarge only when small. */
export const scaleFor = (width: number, height: number, maxSide: number, minShortSide: number): number => {
  const longest = Math.max(width, height)
  const shortest = Math.min(width, height)
  if (longest > maxSide) return maxSide / longest
  if (shortest < minShortSide) return Math.min(minShortSide / shortest, maxSide / longest)
  return 1
}

const toImageError = (e: unknown): ImageError => {
  if (e instanceof ImageError) return e
  const text = errorMessage(e)
  if (/pixel limit/i.test(text)) {
    return new ImageError({ reason: "too_many_pixels", message: `image has more than ${MAX_INPUT_PIXELS} pixels`, cause: e })
  }
  if (/unsupported image format/i.test(text)) {
    return new ImageError({ reason: "not_an_image", message: "not a JPEG or PNG image", cause: e })
  }
  return new ImageError({ reason: "corrupt", message: `image data is damaged: ${text}`, cause: e })
}

/**
 * The image ready for parsing, as PNG: upright (EXIF orientation applied), transparency on white,
 * scaled so the longest side is at most `maxSide` and — for small images — the shorter side is
 * about `minShortSide` (never beyond `maxSide`), greyscale, contrast stretched, ruled lines erased;
 * then, for OCR, rescaled again so that its lines of text are about `textHeight` px tall (never
 * beyond `maxSide`): tesseract's accuracy depends on the size of the text far more than on the
 * size of the image.
 *
 * Rejects with ImageError: `not_an_image` (not JPEG/PNG by content), `too_many_pixels` (more than
 * 40 million pixels, checked from the header before anything is decoded, and again by sharp's own
 * limit while decoding), `corrupt` (damaged data; sharp runs with `failOn: "error"`).
 */
export const normalizeForParsing = async (bytes: Uint8Array, opts: NormalizeOptions = {}): Promise<Buffer> => {
  const maxSide = opts.maxSide ?? DEFAULT_MAX_SIDE
  const minShortSide = Math.min(opts.minShortSide ?? DEFAULT_MIN_SHORT_SIDE, maxSide)
  const sniffed = sniffImageType(bytes)
  if (sniffed === null) throw new ImageError({ reason: "not_an_image", message: "not a JPEG or PNG image" })
  const input = () => sharp(bytes, { limitInputPixels: MAX_INPUT_PIXELS, failOn: "error" })
  try {
    const meta = await sharp(bytes, { limitInputPixels: false, failOn: "error" }).metadata()
    if (meta.format !== sniffed) {
      throw new ImageError({ reason: "not_an_image", message: "not a JPEG or PNG image" })
    }
    const width = meta.autoOrient?.width ?? meta.width ?? 0
    const height = meta.autoOrient?.height ?? meta.height ?? 0
    if (width <= 0 || height <= 0) throw new ImageError({ reason: "corrupt", message: "image has no size" })
    if (width * height > MAX_INPUT_PIXELS) {
      throw new ImageError({
        reason: "too_many_pixels",
        message: `image is ${width}×${height} pixels; at most ${MAX_INPUT_PIXELS} pixels are accepted`
      })
    }
    const removeLines = opts.removeLines !== false
    const render = async (targetWidth: number) => {
      const grey = await input()
        .rotate()
        .resize({ width: Math.max(1, Math.round(targetWidth)) })
        .flatten({ background: "#ffffff" })
        .greyscale()
        .normalise()
        .toColourspace("b-w")
        .raw()
        .toBuffer({ resolveWithObject: true })
      const { width: w, height: h, channels } = grey.info
      const pixels = !removeLines || channels !== 1 ? grey.data : removeRuledLines(grey.data, w, h)
      return { pixels, w, h, channels }
    }
    let scaledWidth = width * scaleFor(width, height, maxSide, minShortSide)
    let out = await render(scaledWidth)
    const textHeight = opts.textHeight === undefined ? OCR_TEXT_HEIGHT : opts.textHeight
    if (textHeight !== null && out.channels === 1) {
      const measured = estimateTextHeight(out.pixels, out.w, out.h)
      if (measured !== null) {
        const factor = Math.min(
          Math.max(textHeight / measured, MIN_TEXT_RESCALE),
          MAX_TEXT_RESCALE,
          maxSide / Math.max(out.w, out.h)
        )
        if (Math.abs(factor - 1) > 0.08) {
          scaledWidth = out.w * factor
          out = await render(scaledWidth)
        }
      }
    }
    return await sharp(out.pixels, { raw: { width: out.w, height: out.h, channels: out.channels } })
      .toColourspace("b-w")
      .png({ compressionLevel: 6 })
      .toBuffer()
  } catch (e) {
    throw toImageError(e)
  }
}
