// Undoing a phone photo of a paper card, over raw greyscale buffers (one byte per pixel): find the
// paper (its four edges against the desk), measure the skew of the text, flatten uneven light
// (background estimation), threshold adaptively (Sauvola) and find ruled lines at a slight angle.
// Plain TypeScript: each step is one or two linear passes, tens of milliseconds on a card.
import { type Homography, homography, type Point, type Quad, rectQuad } from "./geometry.js"

export interface Grey {
  readonly data: Uint8Array
  readonly width: number
  readonly height: number
}

// ---------------------------------------------------------------------------------------------
// Finding the paper

/** Sobel gradient magnitude (|gx| + |gy|, saturated at 65535); borders are 0. */
const sobel = ({ data, width: w, height: h }: Grey): Uint16Array => {
  const out = new Uint16Array(w * h)
  for (let y = 1; y < h - 1; y++) {
    for (let x = 1; x < w - 1; x++) {
      const i = y * w + x
      const a = data[i - w - 1]!
      const b = data[i - w]!
      const c = data[i - w + 1]!
      const d = data[i - 1]!
      const f = data[i + 1]!
      const g = data[i + w - 1]!
      const hh = data[i + w]!
      const k = data[i + w + 1]!
      const gx = c + 2 * f + k - a - 2 * d - g
      const gy = g + 2 * hh + k - a - 2 * b - c
      out[i] = Math.min(65535, Math.abs(gx) + Math.abs(gy))
    }
  }
  return out
}

/** 3×3 binary dilation. */
export const dilate = (mask: Uint8Array, w: number, h: number): Uint8Array => {
  const out = new Uint8Array(w * h)
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      if (mask[y * w + x] === 0) continue
      for (let yy = Math.max(0, y - 1); yy <= Math.min(h - 1, y + 1); yy++) {
        out.fill(1, yy * w + Math.max(0, x - 1), yy * w + Math.min(w - 1, x + 1) + 1)
      }
    }
  }
  return out
}

/**
 * The border pixels that look like desk: not brighter than the local median of the border (over
 * about a sixth of the perimeter) by more than a ratio of about 1.2. Where a corner of the sheet
 * leaves the frame, its bright pixels on the border are no seed of the desk.
 */
const deskSeeds = (logImage: Uint8Array, w: number, h: number): Uint8Array => {
  const ring: Array<number> = []
  for (let x = 0; x < w; x++) ring.push(x)
  for (let y = 1; y < h; y++) ring.push(y * w + w - 1)
  for (let x = w - 2; x >= 0; x--) ring.push((h - 1) * w + x)
  for (let y = h - 2; y > 0; y--) ring.push(y * w)
  const seeds = new Uint8Array(w * h)
  const half = Math.max(10, Math.round(ring.length / 12))
  const window: Array<number> = []
  for (let k = 0; k < ring.length; k++) {
    window.length = 0
    for (let j = k - half; j <= k + half; j += 3) window.push(logImage[ring[(j + ring.length) % ring.length]!]!)
    window.sort((a, b) => a - b)
    const median = window[window.length >> 1]!
    if (logImage[ring[k]!]! <= median + 10) seeds[ring[k]!] = 1
  }
  return seeds
}

/** Pixels reachable from the seeds through pixels where `open` is 1 (4-connected). */
const floodFrom = (seeds: Uint8Array, open: Uint8Array, w: number, h: number): Uint8Array => {
  const reached = new Uint8Array(w * h)
  const queue = new Int32Array(w * h)
  let head = 0
  let tail = 0
  const push = (i: number) => {
    if (open[i] === 1 && reached[i] === 0) {
      reached[i] = 1
      queue[tail++] = i
    }
  }
  for (let i = 0; i < w * h; i++) if (seeds[i] === 1) push(i)
  while (head < tail) {
    const i = queue[head++]!
    const x = i % w
    if (x > 0) push(i - 1)
    if (x < w - 1) push(i + 1)
    if (i >= w) push(i - w)
    if (i < w * (h - 1)) push(i + w)
  }
  return reached
}

/** The largest 4-connected component of `mask`, as a mask, with its pixel count. */
const largestComponent = (mask: Uint8Array, w: number, h: number): { mask: Uint8Array; area: number } => {
  const label = new Int32Array(w * h)
  const queue = new Int32Array(w * h)
  let best = 0
  let bestArea = 0
  let next = 1
  for (let s = 0; s < w * h; s++) {
    if (mask[s] === 0 || label[s] !== 0) continue
    const id = next++
    let head = 0
    let tail = 0
    label[s] = id
    queue[tail++] = s
    while (head < tail) {
      const i = queue[head++]!
      const x = i % w
      // Inlined neighbours: this loop visits most pixels of the image.
      if (x > 0 && mask[i - 1] === 1 && label[i - 1] === 0) {
        label[i - 1] = id
        queue[tail++] = i - 1
      }
      if (x < w - 1 && mask[i + 1] === 1 && label[i + 1] === 0) {
        label[i + 1] = id
        queue[tail++] = i + 1
      }
      if (i >= w && mask[i - w] === 1 && label[i - w] === 0) {
        label[i - w] = id
        queue[tail++] = i - w
      }
      if (i < w * (h - 1) && mask[i + w] === 1 && label[i + w] === 0) {
        label[i + w] = id
        queue[tail++] = i + w
      }
    }
    if (tail > bestArea) {
      bestArea = tail
      best = id
    }
  }
  const out = new Uint8Array(w * h)
  for (let i = 0; i < w * h; i++) if (label[i] === best && best !== 0) out[i] = 1
  return { mask: out, area: bestArea }
}

interface Line {
  /** Points satisfy nx·x + ny·y = c, (nx, ny) a unit normal. */
  readonly nx: number
  readonly ny: number
  readonly c: number
}

/** Least-squares line through points, refitted once without the points further than 1.5 px. */
const fitLine = (points: ReadonlyArray<Point>): Line | null => {
  const fit = (ps: ReadonlyArray<Point>): Line | null => {
    if (ps.length < 5) return null
    let mx = 0
    let my = 0
    for (const p of ps) {
      mx += p.x
      my += p.y
    }
    mx /= ps.length
    my /= ps.length
    let sxx = 0
    let syy = 0
    let sxy = 0
    for (const p of ps) {
      sxx += (p.x - mx) ** 2
      syy += (p.y - my) ** 2
      sxy += (p.x - mx) * (p.y - my)
    }
    // The direction of least variance is the normal (total least squares).
    const theta = 0.5 * Math.atan2(2 * sxy, sxx - syy)
    const nx = -Math.sin(theta)
    const ny = Math.cos(theta)
    return { nx, ny, c: nx * mx + ny * my }
  }
  const first = fit(points)
  if (first === null) return null
  const kept = points.filter((p) => Math.abs(first.nx * p.x + first.ny * p.y - first.c) <= 1.5)
  return fit(kept.length >= points.length / 2 ? kept : points)
}

const intersect = (a: Line, b: Line): Point | null => {
  const det = a.nx * b.ny - a.ny * b.nx
  if (Math.abs(det) < 1e-9) return null
  return { x: (a.c * b.ny - a.ny * b.c) / det, y: (a.nx * b.c - a.c * b.nx) / det }
}

const quadArea = (q: Quad): number => {
  let s = 0
  for (let i = 0; i < 4; i++) {
    const a = q[i]!
    const b = q[(i + 1) % 4]!
    s += a.x * b.y - b.x * a.y
  }
  return Math.abs(s) / 2
}

const cornerAngle = (prev: Point, at: Point, next: Point): number => {
  const ax = prev.x - at.x
  const ay = prev.y - at.y
  const bx = next.x - at.x
  const by = next.y - at.y
  return (Math.acos((ax * bx + ay * by) / (Math.hypot(ax, ay) * Math.hypot(bx, by))) * 180) / Math.PI
}

/** The mean grey along the segment a→b, shifted by `offset` px along the outward normal `n`. */
const meanAlong = (img: Grey, a: Point, b: Point, n: Point, offset: number): number => {
  let sum = 0
  let count = 0
  for (let t = 0.1; t <= 0.9; t += 0.02) {
    const x = Math.round(a.x + (b.x - a.x) * t + n.x * offset)
    const y = Math.round(a.y + (b.y - a.y) * t + n.y * offset)
    if (x < 0 || y < 0 || x >= img.width || y >= img.height) continue
    sum += img.data[y * img.width + x]!
    count++
  }
  return count === 0 ? NaN : sum / count
}

/**
 * Gradient magnitude (of the log image) above which a pixel is an edge. White paper against a desk
 * is a ratio of brightness of about 1.5 or more, whatever the light: in the log image that is a
 * step of about 25 levels and a Sobel magnitude of 60 or more; desk grain and JPEG noise stay far
 * below.
 */
const EDGE = 40

/** Each grey level's logarithm, on 0–255: a shadow or gradient multiplies brightness, here it shifts it. */
const LOG = Uint8Array.from({ length: 256 }, (_, v) => Math.round((255 * Math.log(1 + v + 16)) / Math.log(256 + 16)))

/**
 * The four corners of the sheet of paper in a (small, slightly blurred) greyscale photo, or null
 * when no sheet stands out: the desk is what is reachable from the desk-like pixels of the image
 * border (deskSeeds) without crossing an edge of the log image (a shadow scales both sides of an
 * edge alike); the largest region it leaves is the sheet; each of its sides is a straight line fitted to
 * the region's outline; the sheet must be a convex quadrilateral covering at least 20% of the image,
 * filled by the region, and brighter just inside each side than just outside (a table drawn on a
 * scanned page is not a sheet: white on both sides of its border).
 */
export const findPaper = (img: Grey): Quad | null => {
  const { width: w, height: h } = img
  const logImage = img.data.map((v) => LOG[v]!)
  const mag = sobel({ data: logImage, width: w, height: h })
  const edges = new Uint8Array(w * h)
  for (let i = 0; i < w * h; i++) if (mag[i]! > EDGE) edges[i] = 1
  const wall = dilate(edges, w, h)
  const open = new Uint8Array(w * h)
  for (let i = 0; i < w * h; i++) open[i] = wall[i] === 1 ? 0 : 1
  const desk = floodFrom(deskSeeds(logImage, w, h), open, w, h)
  const inside = new Uint8Array(w * h)
  for (let i = 0; i < w * h; i++) inside[i] = desk[i] === 1 ? 0 : 1
  const { mask, area } = largestComponent(inside, w, h)
  if (area < 0.2 * w * h) return null
  let onBorder = 0
  for (let x = 0; x < w; x++) onBorder += mask[x]! + mask[(h - 1) * w + x]!
  for (let y = 0; y < h; y++) onBorder += mask[y * w]! + mask[y * w + w - 1]!
  // A sheet may leave the frame at a corner, not along whole sides.
  if (onBorder > 0.15 * 2 * (w + h)) return null

  // Rough corners: the extreme points along the diagonals.
  let tl = { x: 0, y: 0, s: Infinity }
  let br = { x: 0, y: 0, s: -Infinity }
  let tr = { x: 0, y: 0, s: -Infinity }
  let bl = { x: 0, y: 0, s: Infinity }
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      if (mask[y * w + x] === 0) continue
      if (x + y < tl.s) tl = { x, y, s: x + y }
      if (x + y > br.s) br = { x, y, s: x + y }
      if (x - y > tr.s) tr = { x, y, s: x - y }
      if (x - y < bl.s) bl = { x, y, s: x - y }
    }
  }
  // Outline points of each side, away from the corners (which may be rounded or folded).
  const top: Array<Point> = []
  const bottom: Array<Point> = []
  const left: Array<Point> = []
  const right: Array<Point> = []
  const spanX = (a: Point, b: Point) => [Math.round(Math.min(a.x, b.x)), Math.round(Math.max(a.x, b.x))] as const
  const spanY = (a: Point, b: Point) => [Math.round(Math.min(a.y, b.y)), Math.round(Math.max(a.y, b.y))] as const
  {
    const [x0, x1] = spanX(tl, tr)
    const m = Math.round((x1 - x0) * 0.12)
    for (let x = x0 + m; x <= x1 - m; x++) {
      for (let y = 0; y < h; y++) {
        if (mask[y * w + x] === 1) {
          top.push({ x, y })
          break
        }
      }
    }
  }
  {
    const [x0, x1] = spanX(bl, br)
    const m = Math.round((x1 - x0) * 0.12)
    for (let x = x0 + m; x <= x1 - m; x++) {
      for (let y = h - 1; y >= 0; y--) {
        if (mask[y * w + x] === 1) {
          bottom.push({ x, y })
          break
        }
      }
    }
  }
  {
    const [y0, y1] = spanY(tl, bl)
    const m = Math.round((y1 - y0) * 0.12)
    for (let y = y0 + m; y <= y1 - m; y++) {
      for (let x = 0; x < w; x++) {
        if (mask[y * w + x] === 1) {
          left.push({ x, y })
          break
        }
      }
    }
  }
  {
    const [y0, y1] = spanY(tr, br)
    const m = Math.round((y1 - y0) * 0.12)
    for (let y = y0 + m; y <= y1 - m; y++) {
      for (let x = w - 1; x >= 0; x--) {
        if (mask[y * w + x] === 1) {
          right.push({ x, y })
          break
        }
      }
    }
  }
  const lines = [fitLine(top), fitLine(right), fitLine(bottom), fitLine(left)]
  if (lines.some((l) => l === null)) return null
  const [lt, lr, lb, ll] = lines as [Line, Line, Line, Line]
  const corners = [intersect(ll, lt), intersect(lt, lr), intersect(lr, lb), intersect(lb, ll)]
  if (corners.some((c) => c === null)) return null
  const found = corners as Array<Point>
  // The outline lies on the edge band, about 2 px outside the paper: move each corner inwards.
  const centre = {
    x: found.reduce((s, c) => s + c.x, 0) / 4,
    y: found.reduce((s, c) => s + c.y, 0) / 4
  }
  const inwards = (c: Point): Point => {
    const dx = centre.x - c.x
    const dy = centre.y - c.y
    const d = Math.hypot(dx, dy)
    return { x: c.x + (dx / d) * 2.5, y: c.y + (dy / d) * 2.5 }
  }
  const quad: Quad = [inwards(found[0]!), inwards(found[1]!), inwards(found[2]!), inwards(found[3]!)]
  return validQuad(img, quad, area) ? quad : null
}

const validQuad = (img: Grey, quad: Quad, regionArea: number): boolean => {
  const a = quadArea(quad)
  if (a < 0.2 * img.width * img.height || regionArea / a < 0.88 || regionArea / a > 1.12) return false
  for (let i = 0; i < 4; i++) {
    const angle = cornerAngle(quad[(i + 3) % 4]!, quad[i]!, quad[(i + 1) % 4]!)
    if (angle < 60 || angle > 120) return false
  }
  const centre = { x: quad.reduce((s, c) => s + c.x, 0) / 4, y: quad.reduce((s, c) => s + c.y, 0) / 4 }
  for (let i = 0; i < 4; i++) {
    const p = quad[i]!
    const q = quad[(i + 1) % 4]!
    const len = Math.hypot(q.x - p.x, q.y - p.y)
    let n = { x: (q.y - p.y) / len, y: -(q.x - p.x) / len }
    const mid = { x: (p.x + q.x) / 2, y: (p.y + q.y) / 2 }
    if (n.x * (mid.x - centre.x) + n.y * (mid.y - centre.y) < 0) n = { x: -n.x, y: -n.y }
    const inner = meanAlong(img, p, q, n, -4)
    const outer = meanAlong(img, p, q, n, 5)
    // A side along the image border has no outside to compare with: accepted.
    if (!Number.isNaN(outer) && !(inner - outer >= 12)) return false
  }
  return true
}

// ---------------------------------------------------------------------------------------------
// Geometry of the correction

/** The size of the sheet once flattened: the mean lengths of opposite sides. */
export const quadSize = (q: Quad): { width: number; height: number } => {
  const d = (a: Point, b: Point) => Math.hypot(b.x - a.x, b.y - a.y)
  return { width: (d(q[0], q[1]) + d(q[3], q[2])) / 2, height: (d(q[0], q[3]) + d(q[1], q[2])) / 2 }
}

/**
 * The homography from an output image of `width`×`height` to the source: the output shows the
 * quad (source coordinates) as an upright rectangle, turned by `angle` degrees about its centre
 * (the measured skew of its content, which this undoes).
 */
export const correction = (quad: Quad, width: number, height: number, angle: number): Homography | null => {
  const h = homography(rectQuad(width, height), quad)
  if (h === null) return null
  const t = (angle * Math.PI) / 180
  const cos = Math.cos(t)
  const sin = Math.sin(t)
  const cx = width / 2
  const cy = height / 2
  // R maps an output point to the pre-rotation rectangle: p ↦ R_t(p − c) + c.
  const r = [cos, -sin, cx - cos * cx + sin * cy, sin, cos, cy - sin * cx - cos * cy, 0, 0, 1] as const
  const m = (a: ReadonlyArray<number>, b: ReadonlyArray<number>) =>
    [0, 1, 2].flatMap((i) => [0, 1, 2].map((j) => a[i * 3]! * b[j]! + a[i * 3 + 1]! * b[3 + j]! + a[i * 3 + 2]! * b[6 + j]!))
  const o = m(h, r).map((v, _, all) => v / all[8]!)
  return [o[0]!, o[1]!, o[2]!, o[3]!, o[4]!, o[5]!, o[6]!, o[7]!, 1]
}

// ---------------------------------------------------------------------------------------------
// Light

/**
 * The image divided by its estimated background (paper colour and light), so that paper is white
 * (255) everywhere — under a shadow, across a gradient — and ink keeps its contrast. The
 * background is the brightest value of blocks of `block` px, spread over neighbouring blocks
 * (ink narrower than about five blocks disappears), smoothed and interpolated back.
 */
export const flattenIllumination = (img: Grey, block = Math.max(6, Math.round(Math.max(img.width, img.height) / 120))): Uint8Array => {
  const { data, width: w, height: h } = img
  const bw = Math.ceil(w / block)
  const bh = Math.ceil(h / block)
  let bg: Float32Array = new Float32Array(bw * bh)
  for (let y = 0; y < h; y++) {
    const by = Math.floor(y / block) * bw
    for (let x = 0; x < w; x++) {
      const v = data[y * w + x]!
      const j = by + Math.floor(x / block)
      if (v > bg[j]!) bg[j] = v
    }
  }
  const pass = (src: Float32Array, f: (vals: Array<number>) => number): Float32Array => {
    const out = new Float32Array(bw * bh)
    for (let y = 0; y < bh; y++) {
      for (let x = 0; x < bw; x++) {
        const vals: Array<number> = []
        for (let yy = Math.max(0, y - 1); yy <= Math.min(bh - 1, y + 1); yy++) {
          for (let xx = Math.max(0, x - 1); xx <= Math.min(bw - 1, x + 1); xx++) vals.push(src[yy * bw + xx]!)
        }
        out[y * bw + x] = f(vals)
      }
    }
    return out
  }
  const max = (vals: Array<number>) => Math.max(...vals)
  const mean = (vals: Array<number>) => vals.reduce((a, b) => a + b, 0) / vals.length
  bg = pass(pass(bg, max), max)
  bg = pass(pass(bg, mean), mean)
  const out = new Uint8Array(w * h)
  for (let y = 0; y < h; y++) {
    const fy = Math.min(Math.max((y + 0.5) / block - 0.5, 0), bh - 1)
    const y0 = Math.floor(fy)
    const y1 = Math.min(bh - 1, y0 + 1)
    const ty = fy - y0
    for (let x = 0; x < w; x++) {
      const fx = Math.min(Math.max((x + 0.5) / block - 0.5, 0), bw - 1)
      const x0 = Math.floor(fx)
      const x1 = Math.min(bw - 1, x0 + 1)
      const tx = fx - x0
      const top = bg[y0 * bw + x0]! + (bg[y0 * bw + x1]! - bg[y0 * bw + x0]!) * tx
      const bottom = bg[y1 * bw + x0]! + (bg[y1 * bw + x1]! - bg[y1 * bw + x0]!) * tx
      const b = Math.max(top + (bottom - top) * ty, 24)
      out[y * w + x] = Math.min(255, Math.round((data[y * w + x]! * 255) / b))
    }
  }
  return out
}

/**
 * Ink (1) and paper (0) by Sauvola's adaptive threshold over a `window`-px square: a pixel is ink
 * when darker than mean·(1 + k·(sd/128 − 1)) of its neighbourhood, and darker than `ceiling` (on a
 * flattened page, paper grain and JPEG ringing never are).
 */
export const sauvola = (img: Grey, window = 31, k = 0.2, ceiling = 200): Uint8Array => {
  const { data, width: w, height: h } = img
  const W = w + 1
  const sum = new Float64Array(W * (h + 1))
  const sq = new Float64Array(W * (h + 1))
  for (let y = 0; y < h; y++) {
    let rs = 0
    let rq = 0
    for (let x = 0; x < w; x++) {
      const v = data[y * w + x]!
      rs += v
      rq += v * v
      sum[(y + 1) * W + x + 1] = sum[y * W + x + 1]! + rs
      sq[(y + 1) * W + x + 1] = sq[y * W + x + 1]! + rq
    }
  }
  const r = window >> 1
  const out = new Uint8Array(w * h)
  for (let y = 0; y < h; y++) {
    const y0 = Math.max(0, y - r)
    const y1 = Math.min(h, y + r + 1)
    for (let x = 0; x < w; x++) {
      const v = data[y * w + x]!
      if (v >= ceiling) continue
      const x0 = Math.max(0, x - r)
      const x1 = Math.min(w, x + r + 1)
      const n = (y1 - y0) * (x1 - x0)
      const s = sum[y1 * W + x1]! - sum[y0 * W + x1]! - sum[y1 * W + x0]! + sum[y0 * W + x0]!
      const q = sq[y1 * W + x1]! - sq[y0 * W + x1]! - sq[y1 * W + x0]! + sq[y0 * W + x0]!
      const m = s / n
      const sd = Math.sqrt(Math.max(0, q / n - m * m))
      if (v < m * (1 + k * (sd / 128 - 1))) out[y * w + x] = 1
    }
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// Skew

/**
 * The angle (degrees, within ±`range`) by which the lines of an ink mask are turned clockwise (y
 * down): the angle whose projection of the ink onto the perpendicular gives the sharpest profile
 * (the largest sum of squared bin counts). 0 when there is too little ink to tell.
 */
export const measureSkew = (ink: Uint8Array, w: number, h: number, range = 10): number => {
  const xs: Array<number> = []
  const ys: Array<number> = []
  // About 500 samples along the longest side: enough for 0.05° over a page, four times cheaper.
  const step = Math.max(1, Math.round(Math.max(w, h) / 500))
  for (let y = 0; y < h; y += step) {
    for (let x = 0; x < w; x += step) {
      if (ink[y * w + x] === 1) {
        xs.push(x)
        ys.push(y)
      }
    }
  }
  if (xs.length < 200) return 0
  const diag = Math.ceil(Math.hypot(w, h)) + 2
  const bins = new Float64Array(Math.ceil((2 * diag) / step) + 2)
  const scoreAt = (deg: number): number => {
    const t = (deg * Math.PI) / 180
    const cos = Math.cos(t)
    const sin = Math.sin(t)
    bins.fill(0)
    for (let i = 0; i < xs.length; i++) bins[Math.round((ys[i]! * cos - xs[i]! * sin + diag) / step)]!++
    let s = 0
    for (let i = 0; i < bins.length; i++) s += bins[i]! * bins[i]!
    return s
  }
  let best = 0
  let bestScore = -1
  for (let a = -range; a <= range + 1e-9; a += 0.5) {
    const s = scoreAt(a)
    if (s > bestScore) {
      bestScore = s
      best = a
    }
  }
  const coarse = best
  for (let a = coarse - 0.45; a <= coarse + 0.45 + 1e-9; a += 0.05) {
    const s = scoreAt(a)
    if (s > bestScore) {
      bestScore = s
      best = a
    }
  }
  return Math.round(best * 100) / 100
}

// ---------------------------------------------------------------------------------------------
// Ruled lines

/**
 * The pixels of ruled lines in an ink mask: runs of ink at least `minRun` long, horizontal or
 * vertical, followed within a band of ±`tolerance` px (a line still slanted by a fraction of a
 * degree after deskewing, or bent by a lens, stays one run), widened by one pixel. Characters'
 * strokes are far shorter than `minRun`, and neighbouring characters are separated by gaps.
 */
export const ruledLineMask = (ink: Uint8Array, w: number, h: number, minRun: number, tolerance = 1): Uint8Array => {
  const lines = new Uint8Array(w * h)
  const band = new Uint8Array(Math.max(w, h))
  // Horizontal: the OR of 2·tolerance+1 rows around each row.
  for (let y = 0; y < h; y++) {
    band.fill(0, 0, w)
    for (let yy = Math.max(0, y - tolerance); yy <= Math.min(h - 1, y + tolerance); yy++) {
      for (let x = 0; x < w; x++) if (ink[yy * w + x] === 1) band[x] = 1
    }
    let start = -1
    for (let x = 0; x <= w; x++) {
      const on = x < w && band[x] === 1
      if (on && start < 0) start = x
      else if (!on && start >= 0) {
        if (x - start >= minRun) {
          for (let yy = Math.max(0, y - tolerance); yy <= Math.min(h - 1, y + tolerance); yy++) {
            for (let xx = start; xx < x; xx++) if (ink[yy * w + xx] === 1) lines[yy * w + xx] = 1
          }
        }
        start = -1
      }
    }
  }
  for (let x = 0; x < w; x++) {
    band.fill(0, 0, h)
    for (let xx = Math.max(0, x - tolerance); xx <= Math.min(w - 1, x + tolerance); xx++) {
      for (let y = 0; y < h; y++) if (ink[y * w + xx] === 1) band[y] = 1
    }
    let start = -1
    for (let y = 0; y <= h; y++) {
      const on = y < h && band[y] === 1
      if (on && start < 0) start = y
      else if (!on && start >= 0) {
        if (y - start >= minRun) {
          for (let yy = start; yy < y; yy++) {
            for (let xx = Math.max(0, x - tolerance); xx <= Math.min(w - 1, x + tolerance); xx++) {
              if (ink[yy * w + xx] === 1) lines[yy * w + xx] = 1
            }
          }
        }
        start = -1
      }
    }
  }
  return dilate(lines, w, h)
}

/** Whole-rectangle quad of an image (no sheet found: the photo is the sheet). */
export const wholeImage = (width: number, height: number): Quad => rectQuad(width, height)
