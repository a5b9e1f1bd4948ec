// Plane geometry over raw pixel buffers for card photos: homographies between quadrilaterals and a
// bilinear perspective warp. sharp has affine transforms only; these few operations are all the
// photo correction needs, in plain TypeScript (a 2000×1500 warp takes tens of milliseconds).

export interface Point {
  readonly x: number
  readonly y: number
}

/** Four corners in order: top-left, top-right, bottom-right, bottom-left. */
export type Quad = readonly [Point, Point, Point, Point]

/** A 3×3 projective matrix, row-major, h[8] = 1. */
export type Homography = readonly [number, number, number, number, number, number, number, number, number]

/** Solves A·x = b (n×n, Gaussian elimination with partial pivoting); null when singular. */
const solve = (a: Array<Array<number>>, b: Array<number>): Array<number> | null => {
  const n = b.length
  for (let col = 0; col < n; col++) {
    let pivot = col
    for (let r = col + 1; r < n; r++) if (Math.abs(a[r]![col]!) > Math.abs(a[pivot]![col]!)) pivot = r
    if (Math.abs(a[pivot]![col]!) < 1e-12) return null
    ;[a[col], a[pivot]] = [a[pivot]!, a[col]!]
    ;[b[col], b[pivot]] = [b[pivot]!, b[col]!]
    for (let r = col + 1; r < n; r++) {
      const f = a[r]![col]! / a[col]![col]!
      if (f === 0) continue
      for (let c = col; c < n; c++) a[r]![c]! -= f * a[col]![c]!
      b[r]! -= f * b[col]!
    }
  }
  const x = new Array<number>(n).fill(0)
  for (let r = n - 1; r >= 0; r--) {
    let s = b[r]!
    for (let c = r + 1; c < n; c++) s -= a[r]![c]! * x[c]!
    x[r] = s / a[r]![r]!
  }
  return x
}

/** The homography that maps each `from` corner onto the matching `to` corner; null when degenerate. */
export const homography = (from: Quad, to: Quad): Homography | null => {
  const a: Array<Array<number>> = []
  const b: Array<number> = []
  for (let i = 0; i < 4; i++) {
    const { x, y } = from[i]!
    const { x: u, y: v } = to[i]!
    a.push([x, y, 1, 0, 0, 0, -u * x, -u * y])
    b.push(u)
    a.push([0, 0, 0, x, y, 1, -v * x, -v * y])
    b.push(v)
  }
  const h = solve(a, b)
  return h === null ? null : [h[0]!, h[1]!, h[2]!, h[3]!, h[4]!, h[5]!, h[6]!, h[7]!, 1]
}

export const applyHomography = (h: Homography, p: Point): Point => {
  const w = h[6] * p.x + h[7] * p.y + h[8]
  return { x: (h[0] * p.x + h[1] * p.y + h[2]) / w, y: (h[3] * p.x + h[4] * p.y + h[5]) / w }
}

/** An axis-aligned rectangle as a Quad. */
export const rectQuad = (width: number, height: number): Quad => [
  { x: 0, y: 0 },
  { x: width, y: 0 },
  { x: width, y: height },
  { x: 0, y: height }
]

export interface RawImage {
  readonly data: Uint8Array
  readonly width: number
  readonly height: number
  readonly channels: number
}

/**
 * An image of `width`×`height` whose pixel (x, y) is the source's pixel at `inverse(x, y)`,
 * sampled bilinearly (pixel centres at +0.5); outside the source the `fill` value is used, one
 * per channel.
 */
export const warpPerspective = (
  src: RawImage,
  inverse: Homography,
  width: number,
  height: number,
  fill: ReadonlyArray<number>
): RawImage => {
  const { data, width: sw, height: sh, channels: ch } = src
  const out = new Uint8Array(width * height * ch)
  const [h0, h1, h2, h3, h4, h5, h6, h7, h8] = inverse
  for (let y = 0; y < height; y++) {
    const yc = y + 0.5
    for (let x = 0; x < width; x++) {
      const xc = x + 0.5
      const w = h6 * xc + h7 * yc + h8
      const sx = (h0 * xc + h1 * yc + h2) / w - 0.5
      const sy = (h3 * xc + h4 * yc + h5) / w - 0.5
      const o = (y * width + x) * ch
      if (!(sx > -1 && sy > -1 && sx < sw && sy < sh)) {
        for (let c = 0; c < ch; c++) out[o + c] = fill[c] ?? 255
        continue
      }
      const x0 = Math.floor(sx)
      const y0 = Math.floor(sy)
      const fx = sx - x0
      const fy = sy - y0
      const xa = Math.max(0, x0)
      const xb = Math.min(sw - 1, x0 + 1)
      const ya = Math.max(0, y0)
      const yb = Math.min(sh - 1, y0 + 1)
      for (let c = 0; c < ch; c++) {
        const p00 = data[(ya * sw + xa) * ch + c]!
        const p10 = data[(ya * sw + xb) * ch + c]!
        const p01 = data[(yb * sw + xa) * ch + c]!
        const p11 = data[(yb * sw + xb) * ch + c]!
        const top = p00 + (p10 - p00) * fx
        const bottom = p01 + (p11 - p01) * fx
        out[o + c] = Math.round(top + (bottom - top) * fy)
      }
    }
  }
  return { data: out, width, height, channels: ch }
}
