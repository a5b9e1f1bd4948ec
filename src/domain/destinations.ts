// Where a webhook may be sent (DECISIONS §13): to addresses on the public internet, or in a network
// the operator trusts (WEBHOOK_ALLOWED_NETWORKS). Pure: names are resolved by the caller; this judges addresses.
import * as IpNetwork from "effect/net/IpNetwork"
import * as NetAddress from "effect/net/NetAddress"
import * as Result from "effect/Result"

/** What makes an address unfit for a webhook; none: it is on the public internet. */
export type AddressKind =
  | "unspecified"
  | "loopback"
  | "private"
  | "shared (carrier-grade NAT)"
  | "link-local"
  | "broadcast"
  | "multicast"
  | "reserved"
  | "documentation"
  | "benchmarking"
  | "IPv4-compatible"
  | "local-use NAT64"
  | "Teredo"
  | "unique local"
  | "site-local"

/** How to read the IPv4 address an IPv6 address carries. */
type Embedded = "last 32 bits" | "6to4"

interface Range<Is> {
  readonly network: IpNetwork.IpNetwork
  /** Refused as this kind; or, for a translation prefix, judged by the IPv4 address inside. */
  readonly is: Is
}

const network = (cidr: string): IpNetwork.IpNetwork => Result.getOrThrow(IpNetwork.fromString(cidr))
const range = <Is extends AddressKind | Embedded>(cidr: string, is: Is): Range<Is> => ({ network: network(cidr), is })

// The IANA special-purpose registries (RFC 6890 and its updates), the first match wins. Every
// address of a range that is not globally reachable is refused, even where parts of it are (one
// webhook receiver never lives in 192.0.0.0/24 or 2001::/23).
const IPV4_RANGES: ReadonlyArray<Range<AddressKind>> = [
  range("0.0.0.0/8", "unspecified"), // "this network"
  range("10.0.0.0/8", "private"),
  range("100.64.0.0/10", "shared (carrier-grade NAT)"),
  range("127.0.0.0/8", "loopback"),
  range("169.254.0.0/16", "link-local"), // cloud metadata services live here
  range("172.16.0.0/12", "private"),
  range("192.0.0.0/24", "reserved"), // IETF protocol assignments
  range("192.0.2.0/24", "documentation"),
  range("192.88.99.0/24", "reserved"), // the deprecated 6to4 relay anycast
  range("192.168.0.0/16", "private"),
  range("198.18.0.0/15", "benchmarking"),
  range("198.51.100.0/24", "documentation"),
  range("203.0.113.0/24", "documentation"),
  range("224.0.0.0/4", "multicast"),
  range("255.255.255.255/32", "broadcast"),
  range("240.0.0.0/4", "reserved")
]

const IPV6_RANGES: ReadonlyArray<Range<AddressKind | Embedded>> = [
  range("::/128", "unspecified"),
  range("::1/128", "loopback"),
  // The same IPv4 address, reached over IPv4.
  range("::ffff:0:0/96", "last 32 bits"),
  // NAT64 with the well-known prefix: a translator reaches the IPv4 address inside.
  range("64:ff9b::/96", "last 32 bits"),
  // Local-use NAT64 (RFC 8215): a translator of the local network, whose prefix length (and so
  // where the IPv4 address sits) only that network knows.
  range("64:ff9b:1::/48", "local-use NAT64"),
  range("::/96", "IPv4-compatible"), // deprecated (RFC 4291)
  range("100::/64", "reserved"), // discard-only
  range("2001::/32", "Teredo"),
  range("2001::/23", "reserved"), // IETF protocol assignments (benchmarking 2001:2::/48 among them)
  range("2001:db8::/32", "documentation"),
  range("2002::/16", "6to4"),
  range("3fff::/20", "documentation"),
  range("fc00::/7", "unique local"),
  range("fe80::/10", "link-local"),
  range("fec0::/10", "site-local"), // deprecated
  range("ff00::/8", "multicast")
]

// Everything else outside global unicast (5f00::/16 for SRv6, and the unassigned rest) is reserved.
const GLOBAL_UNICAST = network("2000::/3")

const embeddedIpv4 = (address: NetAddress.Ipv6Address, at: Embedded): NetAddress.Ipv4Address => {
  const b = NetAddress.ipv6ToOctets(address)
  const [o1, o2, o3, o4] = at === "6to4" ? [b[2]!, b[3]!, b[4]!, b[5]!] : [b[12]!, b[13]!, b[14]!, b[15]!]
  return Result.getOrThrow(NetAddress.ipv4FromOctets([o1, o2, o3, o4]))
}

/** Why an address is not on the public internet; undefined when it is. */
export const kindOf = (address: NetAddress.IpAddress): AddressKind | undefined => {
  if (NetAddress.isIpv4Address(address)) return IPV4_RANGES.find((r) => IpNetwork.contains(r.network, address))?.is
  const match = IPV6_RANGES.find((r) => IpNetwork.contains(r.network, address))
  if (match === undefined) return IpNetwork.contains(GLOBAL_UNICAST, address) ? undefined : "reserved"
  if (match.is === "last 32 bits" || match.is === "6to4") return kindOf(embeddedIpv4(address, match.is))
  return match.is
}

/**
 * Whether a webhook may be sent to this address: on the public internet, or in a network the
 * operator admits. An IPv4-mapped address is the IPv4 address itself, so a network of that admits it too.
 */
export const isAllowedAddress = (address: NetAddress.IpAddress, allowed: ReadonlyArray<IpNetwork.IpNetwork>): boolean => {
  const mapped = NetAddress.isIpv6Address(address) && NetAddress.isIpv4Mapped(address)
    ? embeddedIpv4(address, "last 32 bits")
    : undefined
  return kindOf(address) === undefined ||
    allowed.some((network) => IpNetwork.contains(network, address) || (mapped !== undefined && IpNetwork.contains(network, mapped)))
}

/** The first address that may not be reached, with its kind; undefined when every one may. */
export const firstRefused = (
  addresses: ReadonlyArray<NetAddress.IpAddress>,
  allowed: ReadonlyArray<IpNetwork.IpNetwork>
): AddressKind | undefined => {
  for (const address of addresses) {
    if (!isAllowedAddress(address, allowed)) return kindOf(address) ?? "reserved"
  }
  return undefined
}

/** The host of a webhook URL: an address written in it (checked as it is), or a name to resolve. */
export type WebhookHost =
  | { readonly _tag: "Address"; readonly address: NetAddress.IpAddress }
  | { readonly _tag: "Name"; readonly name: string }

/**
 * The host of an absolute http(s) URL; undefined for anything else. WHATWG URL parsing (what
 * `new URL` and the HTTP client do) already rewrites every other way of writing an IPv4 address
 * (`127.1`, `2130706433`, `0x7f.1`, `0177.0.0.1`) as four decimal octets, and an IPv6 one in
 * its compressed hexadecimal form, so that what is judged is what is connected to.
 */
export const webhookHost = (url: string): WebhookHost | undefined => {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return undefined
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return undefined
  const host = parsed.hostname
  if (host.startsWith("[") && host.endsWith("]")) {
    const v6 = NetAddress.ipv6FromString(host.slice(1, -1))
    return Result.isSuccess(v6) ? { _tag: "Address", address: v6.success } : undefined
  }
  const v4 = NetAddress.ipv4FromString(host)
  return Result.isSuccess(v4) ? { _tag: "Address", address: v4.success } : { _tag: "Name", name: host }
}

/** The machine-readable reason a refused URL's issue message starts with (DECISIONS §13). */
export const DESTINATION_NOT_ALLOWED = "destination_not_allowed"

const WHERE_WEBHOOKS_GO = "webhooks are sent only to addresses on the public internet"

const withArticle = (kind: AddressKind): string => (/^[aeiouIU]/.test(kind) ? `an ${kind}` : `a ${kind}`)

/** The refusal of a URL whose host is an address written in the URL. */
export const refusedAddressMessage = (kind: AddressKind): string =>
  `${DESTINATION_NOT_ALLOWED}: the URL's host is ${withArticle(kind)} address; ${WHERE_WEBHOOKS_GO}`

/**
 * The refusal of a URL whose host is a name: one message whether the name does not resolve or
 * resolves to an address that is not allowed, and never the address, so that the answer tells
 * nothing of the platform's own DNS (which internal names exist, where they point).
 */
export const REFUSED_NAME_MESSAGE = `${DESTINATION_NOT_ALLOWED}: the URL's host name must resolve, and only to addresses on ` +
  "the public internet (not loopback, private, link-local or other special-purpose networks); " + WHERE_WEBHOOKS_GO

/** The networks of the embedded quick start (`npm start` without DATABASE_URL): loopback. */
export const LOOPBACK_NETWORKS = "127.0.0.0/8,::1/128"

/**
 * WEBHOOK_ALLOWED_NETWORKS: comma-separated CIDRs (IPv4 or IPv6; a lone address is a network of
 * one), empty for none; or what is wrong with the first bad entry.
 */
export const parseAllowedNetworks = (text: string): Result.Result<ReadonlyArray<IpNetwork.IpNetwork>, string> => {
  const networks: Array<IpNetwork.IpNetwork> = []
  for (const item of text.split(",").map((s) => s.trim()).filter((s) => s !== "")) {
    const cidr = item.includes("/") ? item : `${item}/${item.includes(":") ? 128 : 32}`
    const parsed = IpNetwork.fromString(cidr)
    if (Result.isSuccess(parsed)) {
      networks.push(parsed.success)
      continue
    }
    // An address with bits set after its prefix: name the network that was probably meant.
    const [address, prefix] = cidr.split("/")
    const ip = NetAddress.ipFromString(address ?? "")
    const meant = Result.isSuccess(ip) && /^\d{1,3}$/.test(prefix ?? "")
      ? IpNetwork.fromAddress(ip.success, Number(prefix))
      : undefined
    return Result.fail(
      meant !== undefined && Result.isSuccess(meant)
        ? `${JSON.stringify(item)} has bits set after its prefix; the network is ${IpNetwork.format(meant.success)}`
        : `expected comma-separated networks such as 10.0.0.0/8 or fd00::/8; ${JSON.stringify(item)} is not one`
    )
  }
  return Result.succeed(networks)
}
