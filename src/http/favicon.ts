// GET /favicon.ico: the small icon a browser asks every site for (the docs page's tab shows it), so
// that the request is answered rather than logged and counted as a 404. Unsigned like the docs page;
// a 16×16 heart, drawn below and encoded as an ICO file (one 32-bit bitmap) when the module loads.
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerResponse from "effect/http/HttpServerResponse"

export const FAVICON_PATH = "/favicon.ico"

/** The icon, top row first: `#` is the colour, `.` transparent. */
const HEART = [
  "................",
  "................",
  "...###....###...",
  "..#####..#####..",
  ".##############.",
  ".##############.",
  ".##############.",
  ".##############.",
  "..############..",
  "...##########...",
  "....########....",
  ".....######.....",
  "......####......",
  ".......##.......",
  "................",
  "................"
]

/** The colour, as blue, green, red, alpha (the bitmap's byte order). */
const COLOUR = [0x5a, 0x3c, 0xe0, 0xff]

/**
 * An ICO file of one 16×16 32-bit image: the directory (6 bytes), its entry (16), the bitmap header
 * (40, the height doubled for the mask), the pixels bottom row first, then the AND mask (1 bit a
 * pixel, rows padded to 4 bytes; set where transparent, for viewers that ignore the alpha).
 */
export const encodeIcon = (rows: ReadonlyArray<string>, colour: ReadonlyArray<number>): Uint8Array => {
  const size = rows.length
  const pixelBytes = size * size * 4
  const maskRowBytes = Math.ceil(size / 32) * 4
  const imageBytes = 40 + pixelBytes + maskRowBytes * size
  const file = Buffer.alloc(6 + 16 + imageBytes)
  file.writeUInt16LE(1, 2) // type: icon
  file.writeUInt16LE(1, 4) // one image
  file.writeUInt8(size, 6)
  file.writeUInt8(size, 7)
  file.writeUInt16LE(1, 10) // planes
  file.writeUInt16LE(32, 12) // bits per pixel
  file.writeUInt32LE(imageBytes, 14)
  file.writeUInt32LE(22, 18) // where the image starts
  file.writeUInt32LE(40, 22)
  file.writeInt32LE(size, 26)
  file.writeInt32LE(size * 2, 30)
  file.writeUInt16LE(1, 34)
  file.writeUInt16LE(32, 36)
  file.writeUInt32LE(pixelBytes + maskRowBytes * size, 42)
  const pixels = 62
  const mask = pixels + pixelBytes
  rows.toReversed().forEach((row, y) => {
    for (let x = 0; x < size; x++) {
      if (row[x] === "#") file.set(colour, pixels + (y * size + x) * 4)
      else file[mask + y * maskRowBytes + (x >> 3)]! |= 0x80 >> (x & 7)
    }
  })
  return new Uint8Array(file.buffer, file.byteOffset, file.byteLength)
}

const ICON = encodeIcon(HEART, COLOUR)

/** The icon, cached by the browser for a day. */
export const FaviconLive = HttpRouter.add(
  "GET",
  FAVICON_PATH,
  HttpServerResponse.uint8Array(ICON, { contentType: "image/x-icon", headers: { "cache-control": "public, max-age=86400" } })
)
