// Card image helpers: type by content, EXIF orientation, size bounds, pixel limit, ruled lines.
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

import { describe, expect, it } from "@effect/vitest"
import sharp from "sharp"

import {
  detectImageType,
  estimateTextHeight,
  ImageError,
  md5Hex,
  normalizeForParsing,
  OCR_TEXT_HEIGHT,
  removeRuledLines,
  scaleFor,
  sniffImageType
} from "../../src/card/image.js"

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "fixtures", "cards")
const fixture = (name: string): Buffer => fs.readFileSync(path.join(fixtures, name))

/** A white w×h image with a black square of side `s` in its top-left corner. */
const markedImage = (w: number, h: number, s: number) =>
  sharp({ create: { width: w, height: h, channels: 3, background: "#ffffff" } })
    .composite([{ input: { create: { width: s, height: s, channels: 3, background: "#000000" } }, left: 0, top: 0 }])

const greyPixels = async (png: Buffer) => {
  const { data, info } = await sharp(png).greyscale().raw().toBuffer({ resolveWithObject: true })
  return { at: (x: number, y: number) => data[y * info.width + x]!, width: info.width, height: info.height }
}

const rejection = async (p: Promise<unknown>): Promise<ImageError> => {
  try {
    await p
  } catch (e) {
    if (e instanceof ImageError) return e
    throw e
  }
  throw new Error("expected an ImageError")
}

describe("detectImageType", () => {
  it("JPEG and PNG are recognised by their content", async () => {
    const png = await markedImage(40, 30, 10).png().toBuffer()
    const jpeg = await markedImage(40, 30, 10).jpeg().toBuffer()
    expect(await detectImageType(png)).toBe("png")
    expect(await detectImageType(jpeg)).toBe("jpeg")
    expect(await detectImageType(fixture("card-clean.png"))).toBe("png")
    expect(await detectImageType(fixture("card-photo.jpg"))).toBe("jpeg")
  })

  it("a GIF or a text file labelled .jpg/.png is not an image", async () => {
    const gif = await markedImage(40, 30, 10).gif().toBuffer()
    expect(await detectImageType(gif)).toBeNull()
    expect(await detectImageType(new TextEncoder().encode("姓名：李明\n性别：男"))).toBeNull()
    expect(await detectImageType(new Uint8Array(0))).toBeNull()
  })

  it("a PNG signature followed by garbage is not an image (sharp must read it too)", async () => {
    const fake = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from("not really a png")])
    expect(sniffImageType(fake)).toBe("png")
    expect(await detectImageType(fake)).toBeNull()
  })

  it("a JPEG with PNG bytes' magic is judged by the bytes, not the label", async () => {
    // The same bytes are a PNG however the upload was named: only content counts.
    const png = await markedImage(20, 20, 5).png().toBuffer()
    expect(await detectImageType(png)).toBe("png")
  })
})

describe("md5Hex", () => {
  it("is the hex MD5 of the bytes", () => {
    expect(md5Hex(new TextEncoder().encode("abc"))).toBe("900150983cd24fb0d6963f7d28e17f72")
  })
})

describe("normalizeForParsing", () => {
  it("an EXIF-rotated JPEG comes out upright", async () => {
    // Upright: 400×200 with a black square top-left. Stored turned a quarter left, EXIF 6 ("turn right").
    const upright = await markedImage(400, 200, 60).png().toBuffer()
    const stored = await sharp(upright).rotate(270).jpeg().withMetadata({ orientation: 6 }).toBuffer()
    const raw = await sharp(stored).metadata()
    expect([raw.width, raw.height, raw.orientation]).toEqual([200, 400, 6])

    const out = await greyPixels(await normalizeForParsing(stored, { removeLines: false, textHeight: null }))
    expect(out.width).toBeGreaterThan(out.height)
    const sx = out.width / 400
    expect(out.at(Math.round(20 * sx), Math.round(20 * sx))).toBeLessThan(60) // the square, top-left
    expect(out.at(out.width - 10, out.height - 10)).toBeGreaterThan(200) // white elsewhere
    expect(out.at(Math.round(20 * sx), out.height - 10)).toBeGreaterThan(200)
  })

  it("the photographed fixture (EXIF orientation 6) is turned upright: taller than wide", async () => {
    const raw = await sharp(fixture("card-photo.jpg")).metadata()
    expect(raw.orientation).toBe(6)
    expect(raw.width).toBeGreaterThan(raw.height!)
    const out = await sharp(await normalizeForParsing(fixture("card-photo.jpg"))).metadata()
    expect(out.height).toBeGreaterThan(out.width!)
  })

  it("output is a greyscale PNG", async () => {
    const out = await normalizeForParsing(fixture("card-photo.jpg"))
    const meta = await sharp(out).metadata()
    expect(meta.format).toBe("png")
    expect(meta.channels).toBe(1)
  })

  it("large images are scaled down so the longest side is 2000 px", async () => {
    const big = await markedImage(3000, 2400, 10).jpeg().toBuffer()
    const meta = await sharp(await normalizeForParsing(big, { textHeight: null })).metadata()
    expect([meta.width, meta.height]).toEqual([2000, 1600])
  })

  it("small images are enlarged so the shorter side is 1000 px, never beyond 2000 px", async () => {
    const small = await markedImage(600, 400, 10).png().toBuffer()
    const meta = await sharp(await normalizeForParsing(small, { textHeight: null })).metadata()
    expect([meta.width, meta.height]).toEqual([1500, 1000])
    expect(scaleFor(300, 100, 2000, 1000)).toBeCloseTo(2000 / 300) // capped by the longest side
    expect(scaleFor(1500, 1200, 2000, 1000)).toBe(1) // within bounds: unchanged
  })

  it("maxSide bounds the output for the AI (1568 px)", async () => {
    const options = { maxSide: 1568, textHeight: null, removeLines: false }
    const meta = await sharp(await normalizeForParsing(fixture("card-clean.png"), options)).metadata()
    expect(Math.max(meta.width!, meta.height!)).toBeLessThanOrEqual(1568)
  })

  it("a 20000×20000 PNG is refused by the pixel limit before it is decoded", async () => {
    const bomb = await sharp({
      create: { width: 20000, height: 20000, channels: 3, background: "#000000" },
      limitInputPixels: false
    }).greyscale().png({ compressionLevel: 9 }).toBuffer()
    expect(bomb.length).toBeLessThan(2_000_000) // small file, 400 million pixels
    expect(await detectImageType(bomb)).toBe("png")
    const started = performance.now()
    const e = await rejection(normalizeForParsing(bomb))
    expect(e.reason).toBe("too_many_pixels")
    expect(e.message).toContain("20000×20000")
    expect(performance.now() - started).toBeLessThan(1000)
  }, 60_000)

  it("sharp's own pixel limit also applies while decoding", async () => {
    const big = await sharp({ create: { width: 10500, height: 10000, channels: 3, background: "#ffffff" } }).png().toBuffer()
    const e = await rejection(normalizeForParsing(big))
    expect(e.reason).toBe("too_many_pixels")
  }, 60_000)

  it("a full-resolution 48 MP phone photo is accepted and scaled down", async () => {
    const photo = await sharp({ create: { width: 8000, height: 6000, channels: 3, background: "#ffffff" } }).jpeg().toBuffer()
    const meta = await sharp(await normalizeForParsing(photo)).metadata()
    expect(Math.max(meta.width!, meta.height!)).toBeLessThanOrEqual(2000)
  }, 60_000)

  it("text and GIF bytes are refused as not an image", async () => {
    expect((await rejection(normalizeForParsing(new TextEncoder().encode("hello")))).reason).toBe("not_an_image")
    const gif = await markedImage(40, 30, 10).gif().toBuffer()
    expect((await rejection(normalizeForParsing(gif))).reason).toBe("not_an_image")
  })

  it("a truncated JPEG is refused as corrupt (failOn: error)", async () => {
    const jpeg = await markedImage(400, 300, 50).jpeg().toBuffer()
    const e = await rejection(normalizeForParsing(jpeg.subarray(0, Math.floor(jpeg.length / 2))))
    expect(e.reason).toBe("corrupt")
  })
})

describe("text height", () => {
  it("OCR images are rescaled so that lines of text are about OCR_TEXT_HEIGHT px tall", async () => {
    for (const name of ["card-clean.png", "card-photo.jpg", "card-table.png"]) {
      const { data, info } = await sharp(await normalizeForParsing(fixture(name))).toColourspace("b-w").raw().toBuffer({
        resolveWithObject: true
      })
      const measured = estimateTextHeight(data, info.width, info.height)
      expect([name, Math.abs(measured! - OCR_TEXT_HEIGHT) <= 3]).toEqual([name, true])
    }
  })

  it("the estimate is the height of the lines of text (34 px type: about 32 px)", async () => {
    const lines = Array.from(
      { length: 8 },
      (_, i) => `<text x="40" y="${80 + i * 70}" font-family="sans-serif" font-size="34" fill="#000">HELLO WORLD 12345 ABCDEFG</text>`
    )
    const svg = Buffer.from(
      `<svg xmlns="http://www.w3.org/2000/svg" width="800" height="640"><rect width="100%" height="100%" fill="#fff"/>${
        lines.join("")
      }</svg>`
    )
    const { data, info } = await sharp(svg).greyscale().raw().toBuffer({ resolveWithObject: true })
    const measured = estimateTextHeight(data, info.width, info.height)
    expect(measured).toBeGreaterThanOrEqual(22)
    expect(measured).toBeLessThanOrEqual(34)
    expect(estimateTextHeight(new Uint8Array(800 * 640).fill(255), 800, 640)).toBeNull()
  })
})

describe("removeRuledLines", () => {
  it("long horizontal and vertical rules are erased, short strokes of characters are kept", async () => {
    const w = 600
    const h = 400
    const svg = Buffer.from(
      `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}"><rect width="100%" height="100%" fill="#fff"/>` +
        `<line x1="20" y1="100" x2="580" y2="100" stroke="#000" stroke-width="3"/>` +
        `<line x1="300" y1="20" x2="300" y2="380" stroke="#000" stroke-width="3"/>` +
        `<rect x="100" y="200" width="40" height="8" fill="#000"/></svg>`
    )
    const { data } = await sharp(svg).greyscale().raw().toBuffer({ resolveWithObject: true })
    const out = removeRuledLines(data, w, h)
    const at = (x: number, y: number) => out[y * w + x]!
    expect(data[100 * w + 50]).toBeLessThan(100)
    expect(at(50, 100)).toBe(255) // horizontal rule gone
    expect(at(300, 50)).toBe(255) // vertical rule gone
    expect(at(120, 204)).toBeLessThan(100) // a 40 px stroke stays
  })
})
