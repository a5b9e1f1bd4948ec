// The CPU readings the cost benchmarks divide by their request counts (bench/cpu.ts): the fields of
// a /proc/<pid>/stat line, and a process tree's time counting the children that already ended.
import { spawn } from "node:child_process"

import { describe, expect, it } from "@effect/vitest"

import { clusterCpuNs, costOfTurn, cpuNs, cpuNsByGroup, hasProc, parseStat, postmasterOf, threadGroupOf } from "../../bench/cpu.js"

describe("bench CPU readings", () => {
  it("a stat line's fields are counted from the last parenthesis, whatever the command name holds", () => {
    const line = "4242 (postgres: a) b (c) S 17 4242 4242 0 -1 4194560 500 0 0 0 123 45 6 7 20 0 1 0 100 1000 50"
    expect(parseStat(line)).toEqual({ pid: 4242, ppid: 17, utime: 123, stime: 45, cutime: 6, cstime: 7 })
  })

  it("a line that is not a stat line is refused, not read as zeros", () => {
    expect(() => parseStat("not a stat line")).toThrow(/not a \/proc/)
    expect(() => parseStat("12 (x) S 1 2")).toThrow(/not a \/proc/)
  })

  it.skipIf(!hasProc())("a tree's time counts a child's CPU while it runs and after it ended", async () => {
    // The child spends a fixed amount of CPU (not of wall time: a loaded machine gives it less),
    // says so, and idles a moment before it ends.
    const burn = "const t = process.cpuUsage(); while (process.cpuUsage(t).user < 300_000) {} " +
      "process.stdout.write('burnt'); setTimeout(() => {}, 1000)"
    const before = clusterCpuNs(process.pid)
    const child = spawn(process.execPath, ["-e", burn], { stdio: ["ignore", "pipe", "ignore"] })
    const ended = new Promise((resolve) => child.once("exit", resolve))
    await new Promise((resolve) => child.stdout.once("data", resolve))
    expect(postmasterOf(child.pid!)).toBe(process.pid)
    // Running: its own time, to the nanosecond.
    expect(clusterCpuNs(process.pid) - before).toBeGreaterThanOrEqual(300e6)
    await ended
    // Ended and reaped: its time is in this process's cutime now (to the 10 ms tick).
    expect(clusterCpuNs(process.pid) - before).toBeGreaterThanOrEqual(290e6)
    expect(cpuNs(process.pid)).toBeGreaterThan(0)
  })

  it("a thread is grouped by its name, the main thread by its id", () => {
    expect(threadGroupOf(4242, 4242, "node")).toBe("main")
    expect(threadGroupOf(4242, 4243, "node-V8Worker")).toBe("v8")
    expect(threadGroupOf(4242, 4250, "libuv-worker")).toBe("libuv")
    expect(threadGroupOf(4242, 4252, "DelayedTaskSche")).toBe("other")
  })

  it.skipIf(!hasProc())("CPU spent by JavaScript shows on the main thread, and the groups add up to the process's time", () => {
    const before = cpuNsByGroup(process.pid)
    const t = process.cpuUsage()
    while (process.cpuUsage(t).user < 200_000) {
      // burn 200 ms of CPU on this thread
    }
    const after = cpuNsByGroup(process.pid)
    expect(after.main - before.main).toBeGreaterThanOrEqual(190e6)
    const total = cpuNs(process.pid)
    const summed = after.main + after.v8 + after.libuv + after.other
    // Read a moment apart: the sum is the process's time within what ran in between.
    expect(Math.abs(total - summed)).toBeLessThan(50e6)
  })

  it.skipIf(!hasProc())("a turn's cost is the process's CPU over it divided by the requests it made, its idle rate left out", async () => {
    const burn = async () => {
      const t = process.cpuUsage()
      while (process.cpuUsage(t).user < 200_000) {
        // 200 ms of CPU on the main thread, "4 requests" of 50 ms
      }
      return { requests: 4 }
    }
    const { cost, result } = await costOfTurn(process.pid, 0, burn)
    expect(result.requests).toBe(4)
    expect(cost.us).toBeGreaterThanOrEqual(47_500)
    expect(cost.byGroup.main).toBeGreaterThanOrEqual(47_500)
    // The idle rate is taken off: a rate of one CPU takes the turn's whole wall time off its cost.
    const idle = await costOfTurn(process.pid, 1, burn)
    expect(idle.cost.us).toBeLessThan(cost.us)
  })
})
