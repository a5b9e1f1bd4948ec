// Card image helpers: type by content, EXIF orientation, size bounds, pixel limit, ruled lines; and
// the correction of phone photos (sheet, perspective, skew, light, ruled lines at a slant).
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

import { describe, expect, it } from "@effect/vitest"
import sharp from "sharp"

import { applyHomography, homography, type Quad, rectQuad, warpPerspective } from "../../src/card/geometry.js"
import {
  detectImageType,
  estimateTextHeight,
  ImageError,
  md5Hex,
  normalizeForParsing,
  OCR_TEXT_HEIGHT,
  type PhotoReport,
  preparePhoto,
  removeRuledLines,
  scaleFor,
  sniffImageType
} from "../../src/card/image.js"
import { correction, findPaper, flattenIllumination, type Grey, measureSkew, ruledLineMask, sauvola } from "../../src/card/photo.js"
import { loadPhotoTruth, photoBytes, type PhotoTruth } from "../fixtures/cards/photos/truth.js"

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

// ---------------------------------------------------------------------------------------------
// Phone photos: the sheet, its perspective, skew, light and ruled lines (src/card/photo.ts)

/** Rows of short black bars ("words"), as SVG, inside a w×h box; font-free so CI needs no font. */
const wordRows = (x0: number, y0: number, w: number, rows: number, pitch: number, barH: number): string => {
  let out = ""
  for (let r = 0; r < rows; r++) {
    for (let x = x0; x < x0 + w - 40; x += 46) out += `<rect x="${x}" y="${y0 + r * pitch}" width="34" height="${barH}" fill="#111"/>`
  }
  return out
}

const greyOf = async (svg: string): Promise<Grey> => {
  const { data, info } = await sharp(Buffer.from(svg)).greyscale().toColourspace("b-w").raw().toBuffer({ resolveWithObject: true })
  return { data, width: info.width, height: info.height }
}

describe("findPaper", () => {
  /** A white sheet on a dark desk, its corners at `quad`, with rows of words on it. */
  const photo = (w: number, h: number, quad: Quad, desk = "#5a4a3c") => {
    const points = quad.map((p) => `${p.x},${p.y}`).join(" ")
    return `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}"><rect width="100%" height="100%" fill="${desk}"/>` +
      `<polygon points="${points}" fill="#f4f2ea"/>${wordRows(quad[0].x + 40, quad[0].y + 40, 220, 5, 30, 8)}</svg>`
  }

  it("finds the four corners of a tilted sheet in perspective, to within 3 px", async () => {
    const quad: Quad = [{ x: 80, y: 60 }, { x: 390, y: 45 }, { x: 420, y: 330 }, { x: 60, y: 350 }]
    const found = findPaper(await greyOf(photo(480, 400, quad)))
    expect(found).not.toBeNull()
    found!.forEach((p, i) => {
      expect([i, Math.hypot(p.x - quad[i]!.x, p.y - quad[i]!.y) < 3]).toEqual([i, true])
    })
  })

  it("finds the sheet under a shadow that darkens sheet and desk alike", async () => {
    const quad: Quad = [{ x: 70, y: 50 }, { x: 400, y: 60 }, { x: 390, y: 340 }, { x: 80, y: 330 }]
    const shadow = `<rect x="250" y="0" width="230" height="400" fill="#000" fill-opacity="0.55"/>`
    const svg = photo(480, 400, quad).replace("</svg>", `${shadow}</svg>`)
    const found = findPaper(await greyOf(svg))
    expect(found).not.toBeNull()
    expect(Math.hypot(found![1].x - 400, found![1].y - 60)).toBeLessThan(3)
  })

  it("finds a sheet whose corner leaves the frame", async () => {
    const quad: Quad = [{ x: 60, y: 40 }, { x: 420, y: 30 }, { x: 470, y: 420 }, { x: 50, y: 360 }]
    const found = findPaper(await greyOf(photo(480, 400, quad)))
    expect(found).not.toBeNull()
    expect(Math.hypot(found![0].x - 60, found![0].y - 40)).toBeLessThan(3)
  })

  it("a scanned page (white to the border) has no sheet, even with a ruled table on it", async () => {
    const table = `<rect x="60" y="60" width="360" height="260" fill="none" stroke="#111" stroke-width="2"/>` +
      `<line x1="60" y1="120" x2="420" y2="120" stroke="#111" stroke-width="2"/>`
    const svg =
      `<svg xmlns="http://www.w3.org/2000/svg" width="480" height="400"><rect width="100%" height="100%" fill="#f8f8f4"/>${table}${
        wordRows(80, 140, 300, 5, 30, 8)
      }</svg>`
    expect(findPaper(await greyOf(svg))).toBeNull()
  })
})

describe("correction (perspective and skew in one homography)", () => {
  it("maps the output rectangle's corners onto the sheet's corners, and turns about the centre by the skew", () => {
    const quad: Quad = [{ x: 100, y: 50 }, { x: 500, y: 80 }, { x: 480, y: 400 }, { x: 90, y: 380 }]
    const h = correction(quad, 400, 300, 0)!
    const corners = [{ x: 0, y: 0 }, { x: 400, y: 0 }, { x: 400, y: 300 }, { x: 0, y: 300 }].map((p) => applyHomography(h, p))
    corners.forEach((p, i) => {
      expect(p.x).toBeCloseTo(quad[i]!.x, 6)
      expect(p.y).toBeCloseTo(quad[i]!.y, 6)
    })
    // A rectangle "sheet" equal to the output: the skew alone turns the point right of the centre down.
    const r = correction([{ x: 0, y: 0 }, { x: 400, y: 0 }, { x: 400, y: 300 }, { x: 0, y: 300 }], 400, 300, 90)!
    const p = applyHomography(r, { x: 300, y: 150 })
    expect(p.x).toBeCloseTo(200, 6)
    expect(p.y).toBeCloseTo(250, 6)
    expect(homography(quad, quad)).not.toBeNull()
  })

  it("warpPerspective samples bilinearly and fills outside the source", () => {
    const src = { data: Uint8Array.from([0, 100, 200, 250]), width: 2, height: 2, channels: 1 }
    const identity = homography(rectQuad(2, 2), rectQuad(2, 2))!
    expect([...warpPerspective(src, identity, 2, 2, [255]).data]).toEqual([0, 100, 200, 250])
    const shifted = homography(rectQuad(2, 2), [{ x: 5, y: 5 }, { x: 7, y: 5 }, { x: 7, y: 7 }, { x: 5, y: 7 }])!
    expect([...warpPerspective(src, shifted, 2, 2, [255]).data]).toEqual([255, 255, 255, 255])
  })
})

describe("measureSkew", () => {
  for (const angle of [-6.5, -2, 0, 1.2, 4, 8]) {
    it(`measures rows of words turned by ${angle}° to within 0.2°`, async () => {
      const page = `<svg xmlns="http://www.w3.org/2000/svg" width="900" height="700"><rect width="100%" height="100%" fill="#fff"/>` +
        `<g transform="rotate(${angle} 450 350)">${wordRows(120, 140, 660, 12, 36, 12)}</g></svg>`
      const g = await greyOf(page)
      const ink = g.data.map((v) => (v < 128 ? 1 : 0))
      expect(Math.abs(measureSkew(ink, g.width, g.height) - angle)).toBeLessThanOrEqual(0.2)
    })
  }

  it("is 0 on an empty page", () => {
    expect(measureSkew(new Uint8Array(400 * 300), 400, 300)).toBe(0)
  })
})

describe("flattenIllumination and sauvola", () => {
  it("a page lit from 250 down to 110 comes out white everywhere, its ink dark and found by the threshold", async () => {
    const w = 800
    const h = 500
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}"><defs><linearGradient id="g">` +
      `<stop offset="0" stop-color="rgb(250,250,250)"/><stop offset="1" stop-color="rgb(110,110,110)"/></linearGradient></defs>` +
      `<rect width="100%" height="100%" fill="url(#g)"/>${wordRows(60, 80, 680, 8, 40, 10).replaceAll("#111", "#1a1a1a")}</svg>`
    const g = await greyOf(svg)
    const flat = flattenIllumination(g)
    const at = (a: Uint8Array, x: number, y: number) => a[y * w + x]!
    // Paper between the rows, at the bright and the dark end.
    expect(at(g.data, 780, 110)).toBeLessThan(130)
    expect(at(flat, 20, 110)).toBeGreaterThan(235)
    expect(at(flat, 780, 110)).toBeGreaterThan(235)
    // Ink at the dark end keeps its contrast.
    expect(at(flat, 670, 85)).toBeLessThan(100)
    const ink = sauvola({ data: flat, width: w, height: h }, 31)
    expect(at(ink, 670, 85)).toBe(1)
    expect(at(ink, 670, 110)).toBe(0)
    expect(at(ink, 20, 110)).toBe(0)
  })
})

describe("ruledLineMask", () => {
  it("a rule still slanted by 0.3° after deskewing is found along its whole length; words are not", async () => {
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="1200" height="400"><rect width="100%" height="100%" fill="#fff"/>` +
      `<line x1="20" y1="100" x2="1180" y2="${100 + 1160 * Math.tan((0.3 * Math.PI) / 180)}" stroke="#000" stroke-width="2"/>` +
      `<line x1="600" y1="20" x2="${600 + 360 * Math.tan((0.4 * Math.PI) / 180)}" y2="380" stroke="#000" stroke-width="2"/>` +
      `${wordRows(40, 200, 1100, 3, 40, 14)}</svg>`
    const g = await greyOf(svg)
    const ink = g.data.map((v) => (v < 140 ? 1 : 0))
    const lines = ruledLineMask(ink, g.width, g.height, 72)
    let inkOnRule = 0
    let found = 0
    for (let x = 30; x < 1170; x++) {
      const y = Math.round(100 + (x - 20) * Math.tan((0.3 * Math.PI) / 180))
      for (let yy = y - 2; yy <= y + 2; yy++) {
        if (ink[yy * g.width + x] === 1 && x !== 600) {
          inkOnRule++
          if (lines[yy * g.width + x] === 1) found++
        }
      }
    }
    expect(found / inkOnRule).toBeGreaterThan(0.99)
    expect(lines[300 * g.width + Math.round(600 + 280 * Math.tan((0.4 * Math.PI) / 180))]).toBe(1) // the vertical rule
    expect(lines[207 * g.width + 57]).toBe(0) // a word
  })
})

describe("preparePhoto on generated phone photos", () => {
  const truth = loadPhotoTruth()
  const medium = truth.find((t) => t.difficulty === "medium" && t.layout === "table")!
  const prepare = async (t: PhotoTruth) => {
    const bytes = photoBytes(t)
    const meta = await sharp(bytes).metadata()
    let report: PhotoReport | null = null
    const out = await preparePhoto(() => sharp(bytes).rotate().flatten({ background: "#fff" }).greyscale(), meta.width!, meta.height!, {
      maxSide: 2000,
      minShortSide: 1000,
      removeLines: true,
      textHeight: OCR_TEXT_HEIGHT
    }, (r) => (report = r))
    return { out, report: report! as PhotoReport }
  }

  it("the set has at least 30 photos of every difficulty, 800–4000 px, tilted 0–8°, JPEG quality 40–70", () => {
    expect(truth.length).toBeGreaterThanOrEqual(30)
    for (const d of ["clean", "medium", "hard"] as const) expect(truth.filter((t) => t.difficulty === d).length).toBeGreaterThanOrEqual(8)
    for (const t of truth) {
      expect(Math.max(t.width, t.height)).toBeGreaterThanOrEqual(800)
      expect(Math.max(t.width, t.height)).toBeLessThanOrEqual(4000)
      expect(Math.abs(t.tilt)).toBeLessThanOrEqual(8)
      expect(t.quality).toBeGreaterThanOrEqual(40)
      expect(t.quality).toBeLessThanOrEqual(70)
    }
    expect(new Set(truth.map((t) => t.layout))).toEqual(new Set(["table", "lines", "lines-two", "underlined"]))
    expect(truth.some((t) => t.font.startsWith("kai"))).toBe(true)
  })

  it(`a medium photo of a ruled table (${medium.file}): sheet found, straightened, lines erased, text ${OCR_TEXT_HEIGHT} px`, async () => {
    const { out, report } = await prepare(medium)
    expect(report.sheet).not.toBeNull()
    expect(Math.abs(report.skew)).toBeLessThan(1)
    expect(Math.abs(report.measuredTextHeight! - OCR_TEXT_HEIGHT)).toBeLessThanOrEqual(2)
    // No horizontal run of ink longer than a line of a few characters is left.
    let longest = 0
    for (let y = 0; y < out.height; y++) {
      let run = 0
      for (let x = 0; x < out.width; x++) {
        run = out.data[y * out.width + x]! < 140 ? run + 1 : 0
        longest = Math.max(longest, run)
      }
    }
    expect(longest).toBeLessThan(0.06 * out.width)
  }, 30_000)

  it("a hard photo tilted by more than 4° comes out straight (measured on the prepared image)", async () => {
    const hard = truth.find((t) => t.difficulty === "hard" && Math.abs(t.tilt) > 4)!
    const { out } = await prepare(hard)
    const ink = out.data.map((v) => (v < 140 ? 1 : 0))
    expect(Math.abs(measureSkew(ink, out.width, out.height))).toBeLessThanOrEqual(0.5)
  }, 30_000)
})
