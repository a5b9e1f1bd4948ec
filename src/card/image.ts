// Image helpers for card parsing (sharp): what an upload really is, its MD5, and the normalised
// PNG that the AI and OCR parsers read (upright, bounded size, greyscale, contrast stretched).
import { Data } from "effect"
import sharp from "sharp"

export { md5Hex } from "../domain/signing.js"

export type ImageType = "jpeg" | "png"

/** Decoding refuses images with more pixels than this (decompression bombs). */
export const MAX_INPUT_PIXELS = 40_000_000
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
export const sniffImageType = (bytes: Uint8Array): ImageType | null =>
  isJpegMagic(bytes) ? "jpeg" : isPngMagic(bytes) ? "png" : null

const readMetadata = (bytes: Uint8Array): Promise<sharp.Metadata | null> =>
  sharp(bytes, { limitInputPixels: MAX_INPUT_PIXELS, failOn: "error" }).metadata().catch(() => null)

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
}

/** Grey levels below this count as ink when looking for ruled lines. */
const INK = 140

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
        if (y - start >= minRun) for (let k = start; k < y; k++) erase[k * width + x] = 1
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
  const text = e instanceof Error ? e.message : String(e)
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
 * about `minShortSide` (never beyond `maxSide`), greyscale, contrast stretched, ruled lines erased.
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
    const meta = await input().metadata()
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
    const scale = scaleFor(width, height, maxSide, minShortSide)
    const targetWidth = Math.max(1, Math.round(width * scale))
    const grey = await input()
      .rotate()
      .resize({ width: targetWidth, kernel: scale > 1 ? "cubic" : "lanczos3" })
      .flatten({ background: "#ffffff" })
      .greyscale()
      .normalise()
      .toColourspace("b-w")
      .raw()
      .toBuffer({ resolveWithObject: true })
    const { width: w, height: h, channels } = grey.info
    const pixels = opts.removeLines === false || channels !== 1 ? grey.data : removeRuledLines(grey.data, w, h)
    return await sharp(pixels, { raw: { width: w, height: h, channels } }).png({ compressionLevel: 6 }).toBuffer()
  } catch (e) {
    throw toImageError(e)
  }
}
