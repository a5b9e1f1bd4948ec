// Image helpers for card parsing (sharp): what an upload really is, its MD5, and the normalised
// PNG that the AI and OCR parsers read (upright, bounded size, greyscale; for OCR a phone photo
// undone: sheet, perspective, skew, light and ruled lines, see photo.ts).
import { createHash } from "node:crypto"

import * as Data from "effect/Data"
import type { Metadata, Sharp } from "sharp"

import { errorMessage } from "../domain/text.js"
import { type Quad, warpPerspective } from "./geometry.js"
import {
  correction,
  dilate,
  findPaper,
  flattenIllumination,
  type Grey,
  measureSkew,
  quadSize,
  ruledLineMask,
  sauvola,
  wholeImage
} from "./photo.js"

/** An image's identity for the blacklist and duplicate checks (SPEC: MD5 of the file's bytes). */
export const md5Hex = (bytes: Uint8Array): string => createHash("md5").update(bytes).digest("hex")

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

/**
 * sharp (libvips, about 7 MB resident) is loaded on first use, so an API process that is never sent
 * a card does not hold it. A sharp that cannot load rejects (a defect), it is never taken for a bad image.
 */
const importSharp = () => import("sharp").then((m) => m.default)
let sharpLoading: ReturnType<typeof importSharp> | undefined
const loadSharp = () => (sharpLoading ??= importSharp())

/** Header only (nothing is decoded), so no pixel limit: a huge image is still a PNG, refused later. */
const readMetadata = async (bytes: Uint8Array): Promise<Metadata | null> => {
  const sharp = await loadSharp()
  return sharp(bytes, { limitInputPixels: false, failOn: "error" }).metadata().catch(() => null)
}

/**
 * The type of an image judged by its content: the magic bytes must say JPEG or PNG AND sharp must
 * read the header as that same format. Anything else (a GIF or text named `.jpg`, a PNG signature
 * followed by garbage) is null. The file name and declared content type play no part.
 * Async because sharp reads metadata asynchronously; it rejects only when sharp itself cannot load.
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
  /**
   * Undo a phone photo (see preparePhoto): find the sheet and correct its perspective, deskew,
   * flatten the light, threshold. Default: as removeLines (the OCR image); the AI reads photos as
   * they are.
   */
  readonly correctPhoto?: boolean
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
 * size of the image. With `correctPhoto` (the OCR default) a phone photo is undone instead
 * (preparePhoto: sheet, perspective, skew, light, ruled lines; same bounds and text height).
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
  const sharp = await loadSharp()
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
    if (opts.correctPhoto ?? removeLines) {
      const upright = () => input().rotate().flatten({ background: "#ffffff" }).greyscale()
      const prepared = await preparePhoto(upright, width, height, {
        maxSide,
        minShortSide,
        removeLines,
        textHeight: opts.textHeight === undefined ? OCR_TEXT_HEIGHT : opts.textHeight
      })
      return await sharp(prepared.data, { raw: { width: prepared.width, height: prepared.height, channels: 1 } })
        .toColourspace("b-w")
        .png({ compressionLevel: 6 })
        .toBuffer()
    }
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

// ---------------------------------------------------------------------------------------------
// Phone photos

/** The long side of the image the sheet is looked for in, px. */
const PAPER_SEARCH_SIDE = 480
/** The long side of the first, low-resolution correction (skew and text height are measured on it). */
const MEASURE_SIDE = 1000

const toScale = (q: Quad, k: number): Quad => [
  { x: q[0].x * k, y: q[0].y * k },
  { x: q[1].x * k, y: q[1].y * k },
  { x: q[2].x * k, y: q[2].y * k },
  { x: q[3].x * k, y: q[3].y * k }
]

interface PrepareOptions {
  readonly maxSide: number
  readonly minShortSide: number
  readonly removeLines: boolean
  readonly textHeight: number | null
}

/** What preparePhoto found and did (for tests and the benchmark's diagnostics). */
export interface PhotoReport {
  /** The sheet's corners in the upright image's pixels; null when the photo is taken as the sheet. */
  readonly sheet: Quad | null
  /** The skew undone, degrees (clockwise). */
  readonly skew: number
  /** Text height measured before the final scaling, in final pixels; null when none was found. */
  readonly measuredTextHeight: number | null
}

/** A mask's pixels as ink (0) on white (255), for the text-height estimate. */
const maskImage = (ink: Uint8Array, skip: Uint8Array | null): Uint8Array => {
  const out = new Uint8Array(ink.length).fill(255)
  for (let i = 0; i < ink.length; i++) if (ink[i] === 1 && (skip === null || skip[i] === 0)) out[i] = 0
  return out
}

/**
 * Flattened grey levels from this up are paper (grain, JPEG ringing): clipped to white. Fields right
 * on the hard generated photos by clip: 200 → 76%, 215 → 83%, 225 → 79%, 235 → 77%; 215 and 235
 * also read all 34 fields of the three older fixture cards, 225 not.
 */
const PAPER_CLIP = 215

/** The minimum length of a ruled line: 6% of the longest side (longer than any character). */
const minRunFor = (w: number, h: number): number => Math.max(40, Math.round(0.06 * Math.max(w, h)))

/**
 * A photo of a card made ready for OCR, greyscale: the sheet is found against the desk and its
 * perspective corrected (findPaper; when no sheet stands out the photo is taken as the sheet), the
 * text's skew measured on a low-resolution pass and undone in the same single resampling, the
 * scale chosen so lines of text come out `textHeight` px tall, the light flattened (background
 * estimation), ink separated from paper by an adaptive threshold (everything else is white), and
 * ruled lines erased. `input` decodes the upright greyscale image.
 */
export const preparePhoto = async (
  input: () => Sharp,
  width: number,
  height: number,
  opts: PrepareOptions,
  report?: (r: PhotoReport) => void
): Promise<Grey> => {
  const decode = async (w: number): Promise<Grey> => {
    const targetWidth = Math.max(1, Math.min(width, Math.round(w)))
    const img = targetWidth === width ? input() : input().resize({ width: targetWidth })
    const { data, info } = await img.toColourspace("b-w").raw().toBuffer({ resolveWithObject: true })
    if (info.channels !== 1) throw new Error(`expected one channel, got ${info.channels}`)
    return { data, width: info.width, height: info.height }
  }
  const warp = (src: Grey, quad: Quad, w: number, h: number, angle: number): Grey => {
    const hm = correction(quad, w, h, angle)
    if (hm === null) throw new Error("degenerate sheet")
    return warpPerspective({ ...src, channels: 1 }, hm, w, h, [255])
  }

  // The sheet, on a small blurred copy.
  const searchScale = Math.min(1, PAPER_SEARCH_SIDE / Math.max(width, height))
  const small = await (async () => {
    const { data, info } = await input()
      .resize({ width: Math.max(1, Math.round(width * searchScale)) })
      .blur(0.8)
      .toColourspace("b-w")
      .raw()
      .toBuffer({ resolveWithObject: true })
    return { data, width: info.width, height: info.height }
  })()
  const found = findPaper(small)
  const sheet = found === null ? null : toScale(found, width / small.width)
  const quad = sheet ?? wholeImage(width, height)
  const natural = quadSize(quad)
  const naturalLong = Math.max(natural.width, natural.height)

  // Low-resolution pass: skew, then the text height once straight and without lines.
  const lowScale = MEASURE_SIDE / naturalLong
  const lowSrc = await decode(width * Math.min(1, lowScale))
  const lowQuad = toScale(quad, lowSrc.width / width)
  const lw = Math.max(1, Math.round(natural.width * lowScale))
  const lh = Math.max(1, Math.round(natural.height * lowScale))
  const inkOf = (g: Grey) => {
    const flat = { data: flattenIllumination(g), width: g.width, height: g.height }
    return sauvola(flat, 31)
  }
  let low = warp(lowSrc, lowQuad, lw, lh, 0)
  let lowInk = inkOf(low)
  const skew = measureSkew(lowInk, lw, lh)
  if (Math.abs(skew) >= 0.1) {
    low = warp(lowSrc, lowQuad, lw, lh, skew)
    lowInk = inkOf(low)
  }
  const lowLines = ruledLineMask(lowInk, lw, lh, minRunFor(lw, lh))
  const lowText = estimateTextHeight(maskImage(lowInk, lowLines), lw, lh)

  // The final scale, relative to the sheet's natural size.
  let scale = scaleFor(natural.width, natural.height, opts.maxSide, opts.minShortSide)
  if (opts.textHeight !== null && lowText !== null) {
    const wanted = (lowScale * opts.textHeight) / lowText
    const base = scaleFor(natural.width, natural.height, opts.maxSide, opts.minShortSide)
    scale = Math.min(Math.max(wanted, base * MIN_TEXT_RESCALE), base * MAX_TEXT_RESCALE, opts.maxSide / naturalLong)
  }
  const fw = Math.max(1, Math.round(natural.width * scale))
  const fh = Math.max(1, Math.round(natural.height * scale))
  const src = await decode(width * Math.min(1, scale * 1.15))
  const grey = warp(src, toScale(quad, src.width / width), fw, fh, skew)
  const flat = flattenIllumination(grey)
  const window = opts.textHeight === null ? 31 : Math.max(15, Math.round(opts.textHeight * 1.2) | 1)
  const ink = sauvola({ data: flat, width: fw, height: fh }, window)
  const lines = opts.removeLines ? ruledLineMask(ink, fw, fh, minRunFor(fw, fh)) : null
  // tesseract reads the flattened greyscale better than any binarisation of it (strokes of small,
  // blurred text survive): paper is clipped to white, ruled lines and their anti-aliased fringe
  // erased. Fields right on the hard generated photos: the Sauvola mask itself 59%, grey inside it
  // 64%, grey inside it dilated 68%, this 83% (clean and medium photos 94–96% with each).
  const erase = lines === null ? null : dilate(lines, fw, fh)
  const out = new Uint8Array(fw * fh).fill(255)
  for (let i = 0; i < out.length; i++) if ((erase === null || erase[i] === 0) && flat[i]! < PAPER_CLIP) out[i] = flat[i]!
  if (sheet !== null) {
    // What lies along the sheet's edge is the edge itself (or the desk beyond it), never text.
    const m = Math.max(2, Math.round(0.008 * Math.max(fw, fh)))
    for (let y = 0; y < fh; y++) {
      for (let x = 0; x < fw; x++) if (y < m || y >= fh - m || x < m || x >= fw - m) out[y * fw + x] = 255
    }
  }
  report?.({ sheet, skew, measuredTextHeight: lowText === null ? null : (lowText * scale) / lowScale })
  return { data: out, width: fw, height: fh }
}
