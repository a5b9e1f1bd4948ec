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
 * about `minShortSide` (never beyond `maxSide`), greyscale, contrast stretched.
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
    return await input()
      .rotate()
      .resize({ width: targetWidth, kernel: scale > 1 ? "cubic" : "lanczos3" })
      .flatten({ background: "#ffffff" })
      .greyscale()
      .normalise()
      .png({ compressionLevel: 6 })
      .toBuffer()
  } catch (e) {
    throw toImageError(e)
  }
}
