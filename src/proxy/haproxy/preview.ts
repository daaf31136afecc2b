// GET /admin/haproxy/preview: the bundle gensynchaprx would make from the data as it is now, with its diff against
// the version in force and the master agent's `haproxy -c` verdict; nothing is stored and nothing is applied.
import { database } from "../../shared/db";
import { DomainError } from "../../shared/domain-errors";
import { unifiedDiff } from "../unified-diff";
import { loadInstallation } from "../installation/load";
import { listCertificates, newFallbackCertificate } from "../pki/certificates";
import type { CertificateRow } from "../pki/rows";
import { proxySettings } from "../settings";
import { agentOf, checkedBundle } from "./checked-bundle";
import { generateHaproxyBundle, InvalidConfiguration, type BundleProblem } from "./config";
import { haproxySettingsOf } from "./sync";
import { findVersion } from "./versions";

export interface HaproxyPreview {
  /** The version in force the diff is against; null when none is. */
  version: number | null;
  /** The previewed bundle's digest (certificates included), as its version would have it. */
  digest: string;
  /** Whether shipping it would change what the version in force ships (certificates included). */
  changed: boolean;
  /** haproxy.cfg and the maps. */
  files: Record<string, string>;
  certificates: { file: string; name: string }[];
  /** Unified diff of the text files, from the version in force (or from nothing) to the preview. */
  diff: string;
  /** The master agent's `haproxy -c` verdict; null when no agent is configured or it could not answer. */
  valid: boolean | null;
  /** Why `valid` is false (haproxy's output) or null (why no agent checked); null when valid. */
  validation: string | null;
  problems: BundleProblem[];
  warnings: string[];
}

/**
 * The stored certificates, with a stand-in fallback certificate when none is stored yet (the first gensynchaprx makes
 * and stores it): the preview stores nothing, and the text files do not depend on it.
 */
async function certificatesForPreview(rows: CertificateRow[], now: Date): Promise<CertificateRow[]> {
  if (rows.some((row) => row.source === "fallback")) return rows;
  return [...rows, { id: 0, ...(await newFallbackCertificate(now)) }];
}

/**
 * What gensynchaprx would ship now: the bundle the master's `haproxy -c` accepts, with the backends it refused left
 * out (named in `problems`), and its diff against the version in force; nothing is stored or applied.
 */
export async function previewHaproxy(env: Env, now: Date): Promise<HaproxyPreview> {
  const db = database(env.DB);
  const settings = proxySettings(env);
  const [installation, stored, inForce] = await Promise.all([
    loadInstallation(db),
    listCertificates(db),
    findVersion(db),
  ]);
  const certificates = await certificatesForPreview(stored, now);
  const generate = (excluded: ReadonlyMap<number, string>) => {
    try {
      return generateHaproxyBundle(installation, certificates, haproxySettingsOf(settings), excluded);
    } catch (error) {
      if (error instanceof InvalidConfiguration) {
        throw new DomainError("invalid_state", `The configuration cannot be generated: ${error.message}`);
      }
      throw error;
    }
  };
  const agent = agentOf(settings);
  const { bundle, digest, refusal } = await checkedBundle(agent, generate);
  const unchecked = settings.HAPROXY_AGENT_URL
    ? "HAPROXY_AGENT_TOKEN is not set: no agent checked the bundle"
    : "HAPROXY_AGENT_URL is not set: no agent checked the bundle";
  return {
    version: inForce?.row.id ?? null,
    digest,
    changed: digest !== inForce?.row.digest,
    files: bundle.files,
    certificates: bundle.certificates.map(({ file, row }) => ({ file, name: row.name })),
    diff: unifiedDiff(inForce?.files ?? {}, bundle.files),
    // An agent that could not check gave no verdict.
    valid: !agent || (refusal && !refusal.checked) ? null : !refusal,
    validation: !agent ? unchecked : (refusal?.output ?? null),
    problems: bundle.problems,
    warnings: bundle.warnings,
  };
}
