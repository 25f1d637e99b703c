import { describe, expect, it } from "vitest";
import { MemorySessionStore } from "../../store/memory/index.ts";
import { HttpError } from "../http/http-error.ts";
import { SessionDirectory } from "./session-directory.ts";

const turn = (text: string) => [{ role: "user" as const, content: [{ type: "text" as const, text }] }];

async function storeWith(sessions: Record<string, string | undefined>) {
  const store = new MemorySessionStore();
  for (const [id, owner] of Object.entries(sessions)) {
    await store.appendTurn(id, turn(`${owner ?? "cli"} says hi`), {
      ...(owner !== undefined && { session: { owner } }),
    });
  }
  return store;
}

describe("SessionDirectory", () => {
  it("stores a tenant's new sessions under <tenant>/<id> and finds the plain ids stored before", async () => {
    const store = await storeWith({ abc: "acme", "cli-only": undefined });
    const directory = new SessionDirectory(store);
    expect(await directory.find("acme", "abc")).toMatchObject({ kind: "stored", id: "abc", storeId: "abc" });
    expect(await directory.find("globex", "abc")).toBeUndefined();
    expect(await directory.find("globex", "cli-only")).toBeUndefined();

    const claimed = await directory.claim("globex", "abc");
    expect(claimed).toMatchObject({ kind: "reserved", id: "abc", storeId: "globex/abc", created: true });
    await store.appendTurn(claimed.storeId, turn("globex's own"), { session: { owner: "globex" } });
    claimed.release();
    expect(await directory.find("globex", "abc")).toMatchObject({ kind: "stored", storeId: "globex/abc" });
    expect(await directory.find("acme", "abc")).toMatchObject({ kind: "stored", storeId: "abc" });
    expect((await directory.claim("globex", "cli-only")).storeId).toBe("globex/cli-only");
    // A free plain id too: were it taken, it could be one another tenant deleted a moment ago.
    expect((await directory.claim("globex", "fresh")).storeId).toBe("globex/fresh");
  });

  it("never gives a plain id deleted by one tenant to another's new session", async () => {
    const store = await storeWith({ abc: "acme" });
    const directory = new SessionDirectory(store, { unownedSessionsTenant: "local" });
    await store.deleteSession("abc");
    expect((await directory.claim("globex", "abc")).storeId).toBe("globex/abc");
    // The CLI's tenant keeps plain ids (they are its sessions' ids), but never the form of the server's own ids.
    expect((await directory.claim("local", "abc")).storeId).toBe("abc");
    expect((await directory.claim("local", "sync:globex:phone")).storeId).toBe("local/sync:globex:phone");
  });

  it("gives the sessions stored without an owner to unownedSessionsTenant, and to no other tenant", async () => {
    const store = await storeWith({ "cli-only": undefined, mine: "local", theirs: "acme" });
    const directory = new SessionDirectory(store, { unownedSessionsTenant: "local" });
    expect(await directory.find("local", "cli-only")).toMatchObject({ kind: "stored", storeId: "cli-only" });
    expect(await directory.find("acme", "cli-only")).toBeUndefined();
    expect(await directory.find("local", "theirs")).toBeUndefined();
    const claimed = await directory.claim("local", "cli-only");
    expect(claimed).toMatchObject({ kind: "stored", storeId: "cli-only", created: false });
    await expect(directory.create("local", "cli-only", undefined)).rejects.toMatchObject({ status: 409 });
    expect((await directory.claim("acme", "cli-only")).storeId).toBe("acme/cli-only");
    const listed = await store.listSessions(directory.filter("local"));
    expect(listed.sessions.map((session) => session.id).sort()).toEqual(["cli-only", "mine"]);
    expect(
      (await store.listSessions(directory.filter("acme"))).sessions.map((session) => session.id),
    ).toEqual(["theirs"]);
    const nobody = new SessionDirectory(store);
    expect(await nobody.find("local", "cli-only")).toBeUndefined();
  });

  it("tenants claiming one free id at once get a session each, never one together", async () => {
    const store = new MemorySessionStore();
    const directory = new SessionDirectory(store, { unownedSessionsTenant: "local" });
    for (let round = 0; round < 20; round++) {
      const id = `race-${round}`;
      const [local, acme, globex] = await Promise.all(
        ["local", "acme", "globex"].map((tenant) => directory.claim(tenant, id)),
      );
      expect([local!.storeId, acme!.storeId, globex!.storeId]).toEqual([id, `acme/${id}`, `globex/${id}`]);
      for (const claim of [local!, acme!, globex!]) claim.release();
    }
  });

  it("a request's claim is forgotten when it ends without storing, and an explicit one is kept", async () => {
    const directory = new SessionDirectory(new MemorySessionStore());
    const first = await directory.claim("acme", "ghost");
    const second = await directory.claim("acme", "ghost");
    expect(second).toMatchObject({ storeId: first.storeId, created: false });
    first.release();
    expect(await directory.find("acme", "ghost")).toMatchObject({ kind: "reserved" }); // still held
    second.release();
    second.release(); // twice is harmless
    expect(await directory.find("acme", "ghost")).toBeUndefined();
    expect(directory.reservations("acme")).toEqual([]);

    await directory.create("acme", "kept", "a title");
    const writing = await directory.claim("acme", "kept");
    writing.release();
    expect(await directory.find("acme", "kept")).toMatchObject({ kind: "reserved" });
    expect(directory.reservations("acme").map((entry) => entry.id)).toEqual(["kept"]);
    await expect(directory.create("acme", "kept", undefined)).rejects.toMatchObject({ status: 409 });
    expect((await directory.create("globex", "kept", undefined)).storeId).toBe("globex/kept");
  });

  it("bounds reservations per tenant and in total, and frees room when one is settled", async () => {
    const directory = new SessionDirectory(new MemorySessionStore(), {
      maxReservationsPerTenant: 3,
      maxReservations: 5,
    });
    for (let index = 0; index < 3; index++) await directory.create("acme", `a${index}`, undefined);
    const full = await directory.create("acme", "a3", undefined).catch((error: unknown) => error);
    expect(full).toBeInstanceOf(HttpError);
    expect(full).toMatchObject({ status: 409, message: expect.stringMatching(/no turn yet/) });
    await directory.create("globex", "g0", undefined);
    await directory.create("globex", "g1", undefined);
    await expect(directory.create("initech", "i0", undefined)).rejects.toMatchObject({ status: 409 });
    expect(directory.settle("globex", "acme/a0")).toBeUndefined();
    expect(directory.reservations("acme")).toHaveLength(3);
    directory.settle("acme", "acme/a0");
    expect((await directory.create("initech", "i0", undefined)).storeId).toBe("initech/i0");
    expect(directory.reservations("acme").map((entry) => entry.id)).toEqual(["a2", "a1"]);
  });
});
