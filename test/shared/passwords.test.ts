// Password storage: salted PBKDF2-SHA256 hashes, their verification, and constant-time comparison of secrets.
import { describe, expect, it } from "vitest";
import {
  constantTimeEqualText,
  hashPassword,
  PBKDF2_ITERATIONS,
  sameSecret,
  verifyPassword,
} from "../../src/shared/passwords";

describe("password hashing", () => {
  it("stores PBKDF2-SHA256 with the iteration count and a per-hash salt", async () => {
    const first = await hashPassword("s3cret!");
    const second = await hashPassword("s3cret!");
    expect(first).toMatch(new RegExp(`^pbkdf2-sha256\\$${PBKDF2_ITERATIONS}\\$[\\w-]{22}\\$[\\w-]{43}$`));
    expect(first).not.toBe(second);
    expect(PBKDF2_ITERATIONS).toBeGreaterThanOrEqual(100_000);
  });

  it("accepts the right password and refuses a wrong one or a missing user", async () => {
    const stored = await hashPassword("s3cret!");
    expect(await verifyPassword("s3cret!", stored)).toBe(true);
    expect(await verifyPassword("s3cret?", stored)).toBe(false);
    expect(await verifyPassword("s3cret!", undefined)).toBe(false);
    expect(await verifyPassword("s3cret!", "md5$abc")).toBe(false);
  });

  it("compares secrets of any length", () => {
    expect(constantTimeEqualText("token", "token")).toBe(true);
    expect(constantTimeEqualText("token", "tokem")).toBe(false);
    expect(constantTimeEqualText("token", "token2")).toBe(false);
    expect(constantTimeEqualText("", "")).toBe(true);
  });

  it("tells a configured secret from a prefix, an extension, a case change and the empty string", async () => {
    expect(await sameSecret("master-key-1", "master-key-1")).toBe(true);
    for (const presented of ["master-key-", "master-key-12", "MASTER-KEY-1", "", "master-key-1 "])
      expect(await sameSecret(presented, "master-key-1")).toBe(false);
    expect(await sameSecret("é", "é")).toBe(true);
    expect(await sameSecret("e\u0301", "é")).toBe(false);
  });
});
