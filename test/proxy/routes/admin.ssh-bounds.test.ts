// The bounds of a user and of a container's SSH grants: each refused with 400 naming it, nothing written.
import { beforeAll, describe, expect, it } from "vitest";
import {
  MAX_DEFAULT_PERMISSIONS,
  MAX_PERMISSION_GRANTS,
  MAX_SSH_PUBLIC_KEY_CHARACTERS,
} from "../../../src/proxy/installation/inputs";
import { asAdmin, errorBody, expectJson, rowsOf } from "../../support/proxy-api";
import { createProjectOnHost } from "../../support/proxy-fixtures";

const keyOf = (characters: number) => `ssh-ed25519 ${"A".repeat(characters - "ssh-ed25519 ".length)}`;

beforeAll(async () => {
  await createProjectOnHost("sshb", {
    hostname: "sshb-host.example.com",
    ipv6: "2001:db8::5b",
    containers: { app: "2001:db8::5b1" },
  });
  await expectJson(asAdmin("/admin/users", "POST", { email: "grantee@example.com" }), 200);
});

describe("a user's bounds", () => {
  it(`takes a key of ${MAX_SSH_PUBLIC_KEY_CHARACTERS} characters and refuses one more`, async () => {
    const key = keyOf(MAX_SSH_PUBLIC_KEY_CHARACTERS);
    await expectJson(asAdmin("/admin/users", "POST", { email: "longkey@example.com", sshPublicKey: key }), 200);
    const refused = await expectJson(
      asAdmin("/admin/users", "POST", { email: "toolong@example.com", sshPublicKey: `${key}A` }),
      400,
    );
    expect(refused).toEqual(
      errorBody(`sshPublicKey: Too big: expected string to have <=${MAX_SSH_PUBLIC_KEY_CHARACTERS} characters`),
    );
    expect(await rowsOf("select email from users where email = 'toolong@example.com'")).toEqual([]);
  });

  it(`refuses more than ${MAX_DEFAULT_PERMISSIONS} default permissions and an e-mail over 254 characters`, async () => {
    const many = Array.from({ length: MAX_DEFAULT_PERMISSIONS + 1 }, (_, i) => `user${i}`);
    const refusedList = await expectJson(
      asAdmin("/admin/users", "POST", { email: "many@example.com", defaultPermission: many }),
      400,
    );
    expect(refusedList).toEqual(
      errorBody(`defaultPermission: Too big: expected array to have <=${MAX_DEFAULT_PERMISSIONS} items`),
    );
    const email = `${"a".repeat(64)}@${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(61)}.example`;
    const refusedEmail = await expectJson(asAdmin("/admin/users", "POST", { email }), 400);
    expect(email.length).toBe(262);
    expect(refusedEmail).toEqual(errorBody("email: Too big: expected string to have <=254 characters"));
    expect(await rowsOf("select email from users where email in ('many@example.com', '" + email + "')")).toEqual([]);
  });
});

describe("a container's grants", () => {
  it(`takes ${MAX_PERMISSION_GRANTS} grants and refuses one more, changing nothing`, async () => {
    const grants = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ permission: `u${i}`, userEmail: "grantee@example.com" }));
    await expectJson(asAdmin("/admin/containers/sshb/app/permissions", "PUT", grants(MAX_PERMISSION_GRANTS)), 200);
    const refused = await expectJson(
      asAdmin("/admin/containers/sshb/app/permissions", "PUT", grants(MAX_PERMISSION_GRANTS + 1)),
      400,
    );
    expect(refused).toEqual(errorBody(`Too big: expected array to have <=${MAX_PERMISSION_GRANTS} items`));
    expect(await rowsOf("select count(*) as n from container_permissions")).toEqual([{ n: MAX_PERMISSION_GRANTS }]);
  });
});
