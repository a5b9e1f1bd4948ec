// Webhook destinations (DECISIONS §13): which addresses a webhook may reach, every hostile way of
// writing a URL's host (IPv4 in other notations, IPv6 carrying IPv4, translation prefixes), the
// networks an operator admits (WEBHOOK_ALLOWED_NETWORKS), and refusals that name no address.
import { describe, expect, it } from "@effect/vitest"
import * as IpNetwork from "effect/net/IpNetwork"
import * as NetAddress from "effect/net/NetAddress"
import * as Result from "effect/Result"

import {
  type AddressKind,
  firstRefused,
  isAllowedAddress,
  kindOf,
  LOOPBACK_NETWORKS,
  parseAllowedNetworks,
  REFUSED_NAME_MESSAGE,
  refusedAddressMessage,
  webhookHost
} from "../../src/domain/destinations.js"

const ip = (text: string) => Result.getOrThrow(NetAddress.ipFromString(text))
const networks = (text: string) => Result.getOrThrow(parseAllowedNetworks(text))

/** The host of a URL as the check sees it: the address's kind (public: undefined), or the name. */
const judged = (url: string) => {
  const host = webhookHost(url)
  if (host === undefined) return "not a webhook URL"
  return host._tag === "Name" ? { name: host.name } : { address: NetAddress.formatIp(host.address), kind: kindOf(host.address) }
}

describe("a URL's host, as WHATWG URL parsing (new URL, the HTTP client) leaves it", () => {
  const table: ReadonlyArray<readonly [string, ReturnType<typeof judged>]> = [
    // IPv4 written any other way is rewritten as four decimal octets before it is judged.
    ["http://127.1/", { address: "127.0.0.1", kind: "loopback" }],
    ["http://2130706433/", { address: "127.0.0.1", kind: "loopback" }],
    ["http://0x7f.1/", { address: "127.0.0.1", kind: "loopback" }],
    ["http://0x7F000001/", { address: "127.0.0.1", kind: "loopback" }],
    ["http://0177.0.0.1/", { address: "127.0.0.1", kind: "loopback" }],
    ["http://017700000001/", { address: "127.0.0.1", kind: "loopback" }],
    ["http://127.000.000.001/", { address: "127.0.0.1", kind: "loopback" }],
    ["http://127.0.0.1./", { address: "127.0.0.1", kind: "loopback" }],
    ["http://%31%32%37.0.0.1/", { address: "127.0.0.1", kind: "loopback" }],
    ["http://１２７.0.0.1/", { address: "127.0.0.1", kind: "loopback" }],
    ["http://0/", { address: "0.0.0.0", kind: "unspecified" }],
    ["http://0.0.0.0:5432/", { address: "0.0.0.0", kind: "unspecified" }],
    // IPv6 carrying IPv4: judged by the IPv4 address it reaches.
    ["http://[::ffff:127.0.0.1]/", { address: "::ffff:127.0.0.1", kind: "loopback" }],
    ["http://[::ffff:7f00:1]/", { address: "::ffff:127.0.0.1", kind: "loopback" }],
    ["http://[0:0:0:0:0:ffff:127.0.0.1]/", { address: "::ffff:127.0.0.1", kind: "loopback" }],
    ["http://[::ffff:a9fe:a9fe]/", { address: "::ffff:169.254.169.254", kind: "link-local" }],
    ["http://[::ffff:8.8.8.8]/", { address: "::ffff:8.8.8.8", kind: undefined }],
    ["http://[::127.0.0.1]/", { address: "::7f00:1", kind: "IPv4-compatible" }],
    ["http://[64:ff9b::10.0.0.1]/", { address: "64:ff9b::a00:1", kind: "private" }],
    ["http://[64:ff9b::7f00:1]/", { address: "64:ff9b::7f00:1", kind: "loopback" }],
    ["http://[64:ff9b::8.8.8.8]/", { address: "64:ff9b::808:808", kind: undefined }],
    ["http://[64:ff9b:1::a00:1]/", { address: "64:ff9b:1::a00:1", kind: "local-use NAT64" }],
    ["http://[2002:7f00:1::1]/", { address: "2002:7f00:1::1", kind: "loopback" }],
    ["http://[2002:c0a8:101::1]/", { address: "2002:c0a8:101::1", kind: "private" }],
    ["http://[2002:808:808::1]/", { address: "2002:808:808::1", kind: undefined }],
    ["http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/", { address: "2001:0:4136:e378:8000:63bf:3fff:fdd2", kind: "Teredo" }],
    // The rest of the special-purpose registries.
    ["http://[::1]:5432/", { address: "::1", kind: "loopback" }],
    ["http://[::]/", { address: "::", kind: "unspecified" }],
    ["http://10.0.0.5:8080/admin", { address: "10.0.0.5", kind: "private" }],
    ["http://172.16.0.1/", { address: "172.16.0.1", kind: "private" }],
    ["http://172.31.255.255/", { address: "172.31.255.255", kind: "private" }],
    ["http://172.32.0.1/", { address: "172.32.0.1", kind: undefined }],
    ["http://192.168.1.1/", { address: "192.168.1.1", kind: "private" }],
    ["http://100.64.0.1/", { address: "100.64.0.1", kind: "shared (carrier-grade NAT)" }],
    ["http://100.100.100.200/latest/meta-data/", { address: "100.100.100.200", kind: "shared (carrier-grade NAT)" }],
    ["http://169.254.169.254/latest/meta-data/", { address: "169.254.169.254", kind: "link-local" }],
    ["http://[fe80::1]/", { address: "fe80::1", kind: "link-local" }],
    ["http://[fd00:ec2::254]/latest/meta-data/", { address: "fd00:ec2::254", kind: "unique local" }],
    ["http://[fc00::1]/", { address: "fc00::1", kind: "unique local" }],
    ["http://[fec0::1]/", { address: "fec0::1", kind: "site-local" }],
    ["http://224.0.0.1/", { address: "224.0.0.1", kind: "multicast" }],
    ["http://239.255.255.250/", { address: "239.255.255.250", kind: "multicast" }],
    ["http://[ff02::1]/", { address: "ff02::1", kind: "multicast" }],
    ["http://255.255.255.255/", { address: "255.255.255.255", kind: "broadcast" }],
    ["http://240.0.0.1/", { address: "240.0.0.1", kind: "reserved" }],
    ["http://192.0.0.170/", { address: "192.0.0.170", kind: "reserved" }],
    ["http://192.88.99.1/", { address: "192.88.99.1", kind: "reserved" }],
    ["http://198.18.0.1/", { address: "198.18.0.1", kind: "benchmarking" }],
    ["http://198.19.255.255/", { address: "198.19.255.255", kind: "benchmarking" }],
    ["http://192.0.2.1/", { address: "192.0.2.1", kind: "documentation" }],
    ["http://198.51.100.7/", { address: "198.51.100.7", kind: "documentation" }],
    ["http://203.0.113.9/", { address: "203.0.113.9", kind: "documentation" }],
    ["http://[2001:db8::1]/", { address: "2001:db8::1", kind: "documentation" }],
    ["http://[3fff::1]/", { address: "3fff::1", kind: "documentation" }],
    ["http://[2001:2::1]/", { address: "2001:2::1", kind: "reserved" }],
    ["http://[100::1]/", { address: "100::1", kind: "reserved" }],
    ["http://[5f00::1]/", { address: "5f00::1", kind: "reserved" }],
    ["http://[4000::1]/", { address: "4000::1", kind: "reserved" }],
    // Public addresses.
    ["https://8.8.8.8/hook", { address: "8.8.8.8", kind: undefined }],
    ["https://1.1.1.1/", { address: "1.1.1.1", kind: undefined }],
    ["https://[2606:4700:4700::1111]/", { address: "2606:4700:4700::1111", kind: undefined }],
    // Names: resolved by the caller, whatever they look like.
    ["https://hooks.example.com/in", { name: "hooks.example.com" }],
    ["http://localhost:3000/", { name: "localhost" }],
    ["http://LOCALHOST./", { name: "localhost." }],
    ["http://127.0.0.1.nip.io/", { name: "127.0.0.1.nip.io" }],
    ["http://☃.example/", { name: "xn--n3h.example" }],
    // Not a webhook URL at all.
    ["ftp://127.0.0.1/", "not a webhook URL"],
    ["file:///etc/passwd", "not a webhook URL"],
    ["http://1.2.3.4.5/", "not a webhook URL"],
    ["http://[fe80::1%25eth0]/", "not a webhook URL"],
    ["/relative/path", "not a webhook URL"]
  ]
  it.each(table)("%s → %j", (url, expected) => expect(judged(url)).toEqual(expected))
})

describe("addresses a resolver answers, as an attempt judges them", () => {
  it("every address counts: one refused among public ones refuses them all, and names the first refused kind", () => {
    expect(firstRefused([ip("8.8.8.8"), ip("2606:4700:4700::1111")], [])).toBeUndefined()
    expect(firstRefused([ip("8.8.8.8"), ip("10.1.2.3"), ip("::1")], [])).toBe("private")
    expect(firstRefused([ip("::ffff:127.0.0.1")], [])).toBe("loopback")
  })

  const allowedTable: ReadonlyArray<readonly [string, string, boolean]> = [
    ["127.0.0.1", "", false],
    ["127.0.0.1", LOOPBACK_NETWORKS, true],
    ["127.8.9.10", LOOPBACK_NETWORKS, true],
    ["::1", LOOPBACK_NETWORKS, true],
    // An IPv4-mapped address is the IPv4 address itself.
    ["::ffff:127.0.0.1", LOOPBACK_NETWORKS, true],
    ["10.0.0.5", LOOPBACK_NETWORKS, false],
    ["169.254.169.254", LOOPBACK_NETWORKS, false],
    ["10.0.0.5", "10.0.0.0/24", true],
    ["10.0.1.5", "10.0.0.0/24", false],
    ["fd12:3456::1", "fd12:3456::/32", true],
    ["fd12:3457::1", "fd12:3456::/32", false],
    // A network of IPv4 admits no IPv6 address that merely translates to it.
    ["64:ff9b::a00:5", "10.0.0.0/8", false],
    ["8.8.8.8", "", true]
  ]
  it.each(allowedTable)("%s with WEBHOOK_ALLOWED_NETWORKS=%j: allowed %s", (address, allowed, expected) => {
    expect(isAllowedAddress(ip(address), networks(allowed))).toBe(expected)
  })
})

describe("WEBHOOK_ALLOWED_NETWORKS", () => {
  const table: ReadonlyArray<readonly [string, ReadonlyArray<string> | RegExp]> = [
    ["", []],
    [" , ", []],
    [LOOPBACK_NETWORKS, ["127.0.0.0/8", "::1/128"]],
    [" 10.0.0.0/8 , fd00::/8 ", ["10.0.0.0/8", "fd00::/8"]],
    ["10.0.0.5", ["10.0.0.5/32"]],
    ["::1", ["::1/128"]],
    ["0.0.0.0/0", ["0.0.0.0/0"]],
    ["10.0.0.1/8", /^"10\.0\.0\.1\/8" has bits set after its prefix; the network is 10\.0\.0\.0\/8$/],
    ["fd00::1/8", /the network is fd00::\/8/],
    ["localhost", /^expected comma-separated networks such as 10\.0\.0\.0\/8 or fd00::\/8; "localhost" is not one$/],
    ["10.0.0.0/33", /"10\.0\.0\.0\/33" is not one/],
    ["0177.0.0.0/8", /"0177\.0\.0\.0\/8" is not one/],
    ["10.0.0.0/8;192.168.0.0/16", /is not one/]
  ]
  it.each(table)("%j → %s", (text, expected) => {
    const parsed = parseAllowedNetworks(text)
    if (expected instanceof RegExp) expect(Result.isFailure(parsed) ? parsed.failure : "parsed").toMatch(expected)
    else expect(Result.map(parsed, (ns) => ns.map(IpNetwork.format))).toEqual(Result.succeed(expected))
  })
})

describe("refusals", () => {
  const kinds: ReadonlyArray<AddressKind> = ["loopback", "private", "link-local", "unspecified", "IPv4-compatible", "unique local"]
  it.each(kinds)("an address of kind %s: destination_not_allowed, its kind, and no address", (kind) => {
    const message = refusedAddressMessage(kind)
    expect(message).toMatch(/^destination_not_allowed: the URL's host is an? /)
    expect(message).toContain(`${kind} address`)
    expect(message).not.toMatch(/\d+\.\d+|::/)
  })

  it("a name gets one message whether it does not resolve or resolves to a refused address, with no address", () => {
    expect(REFUSED_NAME_MESSAGE).toMatch(/^destination_not_allowed: /)
    expect(REFUSED_NAME_MESSAGE).not.toMatch(/\d+\.\d+|::/)
  })
})
