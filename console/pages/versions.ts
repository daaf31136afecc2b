// The stored HAProxy or SSH proxy versions, newest first; one version's files with the diff to the version before
// it, and the rollback (activate) behind a confirmation. Generating a new version is one button away.
import { useEffect, useRef, useState } from "preact/hooks";
import { proxyApi, type Answer } from "../api";
import { DiffView, diffLines, withContext } from "../diff";
import { Problem, Warnings, focusLost, html, pending, refusalOf, useAnswer, useOneAtATime, when } from "../ui";

const JOB = { haproxy: "/admin/gensynchaprx", sshproxy: "/admin/writesshprx" };
const TITLE = { haproxy: "HAProxy versions", sshproxy: "SSH proxy versions" };

/** A version's files by name: HAProxy's `files`, the SSH proxy's accounts (as JSON) and YAML. */
function filesOf(kind: Kind, version: any): Record<string, string> {
  if (!version) return {};
  if (kind === "haproxy") return version.files;
  return { "accounts.json": JSON.stringify(version.accounts, null, 2), "sshpiperd.yaml": version.yaml };
}

type Kind = "haproxy" | "sshproxy";

function VersionDiff({ kind, version, previous }: { kind: Kind; version: number; previous?: number }) {
  const load = (number?: number) =>
    number === undefined ? Promise.resolve(undefined) : proxyApi("GET", `/admin/${kind}/versions/${number}`);
  // Either version failing to load is the section's answer: a diff against a missing version would be wrong.
  const { answer } = useAnswer(async () => {
    const [current, before] = await Promise.all([load(version), load(previous)]);
    const failed = [current, before].find((one) => one && !one.ok);
    return failed ?? { ...current!, body: { current: current!.body, before: before?.body } };
  }, [version, previous]);
  const heading = html`<h2>
    Version ${version}${previous === undefined ? " (the oldest kept)" : `, compared with version ${previous}`}
  </h2>`;
  if (!answer) return pending(answer);
  if (!answer.ok) return html`<section aria-label=${`Version ${version}`}>${heading}${pending(answer)}</section>`;
  const after = filesOf(kind, answer!.body.current);
  const before = filesOf(kind, answer!.body.before);
  const names = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  return html`<section aria-label=${`Version ${version}`}>
    ${heading}
    ${answer!.body.current.restoredFrom && html`<p>This version restores version ${answer!.body.current.restoredFrom}.</p>`}
    ${names.map((name) => html`<${DiffView} lines=${withContext(diffLines(before[name] ?? "", after[name] ?? ""))} caption=${name} />`)}
  </section>`;
}

type ActivateProps = { kind: Kind; version: number; act: (request: () => Promise<Answer>) => Promise<void> };

/** The rollback behind a confirmation whose Yes takes the focus each time it opens; Cancel gives it back. */
function Activate({ kind, version, act }: ActivateProps) {
  const [asking, setAsking] = useState(false);
  const yes = useRef<HTMLButtonElement>(null);
  const back = useRef<HTMLButtonElement>(null);
  const cancelled = useRef(false);
  useEffect(() => {
    if (asking) yes.current?.focus();
    else if (cancelled.current && focusLost()) back.current?.focus();
    cancelled.current = false;
  }, [asking]);
  if (!asking)
    return html`<button type="button" ref=${back} onClick=${() => setAsking(true)}>
      Roll back to version ${version}…
    </button>`;
  const confirm = async () => {
    setAsking(false);
    await act(() => proxyApi("POST", `/admin/${kind}/versions/${version}/activate`));
  };
  const cancel = () => ((cancelled.current = true), setAsking(false));
  return html`<div role="alertdialog" aria-label="Confirm the rollback" class="confirm">
    <p>Ship version ${version}'s files again, as a new version? The load balancers then run them.</p>
    <button type="button" ref=${yes} onClick=${confirm}>Yes, roll back to version ${version}</button>
    <button type="button" onClick=${cancel}>Cancel</button>
  </div>`;
}

/**
 * What the last generation or rollback answered, in a box that takes the focus when the confirmation that had it
 * closed, under a status line that exists before its text, so that screen readers announce it.
 */
function Outcome({ outcome }: { outcome?: Answer }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (outcome && focusLost()) box.current?.focus();
  }, [outcome]);
  const warnings = outcome && (Array.isArray(outcome.body) ? outcome.body : outcome.body?.warnings);
  return html`<div class=${outcome ? "outcome applied" : "outcome"} tabindex="-1" ref=${box}>
    <p role="status" class="status">${outcome?.ok ? "Done." : ""}</p>
    ${outcome && (outcome.ok ? html`<${Warnings} warnings=${warnings} />` : html`<${Problem}>${refusalOf(outcome)}<//>`)}
  </div>`;
}

export function VersionsPage({ kind, selected }: { kind: Kind; selected?: string }) {
  const { answer, reload } = useAnswer(() => proxyApi("GET", `/admin/${kind}/versions`), [kind]);
  const [outcome, setOutcome] = useState<Answer | undefined>(undefined);
  const { busy, run } = useOneAtATime();
  const act = (request: () => Promise<Answer>) =>
    run(async () => {
      const result = await request();
      setOutcome(result);
      reload();
    });
  const generate = () => act(() => proxyApi("GET", JOB[kind]));
  const versions: any[] = answer?.ok ? answer.body : [];
  const chosen = selected ? Number(selected) : versions[0]?.version;
  const index = versions.findIndex((version) => version.version === chosen);
  return html`<h1>${TITLE[kind]}</h1>
    <p>
      <button type="button" onClick=${generate} aria-disabled=${busy ? "true" : undefined}>
        ${busy ? "Generating…" : "Generate a new version now"}
      </button>
    </p>
    <${Outcome} outcome=${outcome} />
    ${
      pending(answer) ??
      html`<table>
          <caption>
            Stored versions, newest first
          </caption>
          <thead>
            <tr>
              <th scope="col">Version</th>
              <th scope="col">State</th>
              <th scope="col">Made</th>
              <th scope="col">Restores</th>
              <th scope="col">Rollback</th>
            </tr>
          </thead>
          <tbody>
            ${versions.map(
              (version, position) =>
                html`<tr key=${version.version} aria-current=${version.version === chosen ? "true" : undefined}>
                  <th scope="row"><a href=${`#/${kind}/${version.version}`}>Version ${version.version}</a></th>
                  <td>
                    ${version.status ?? (position === 0 ? "in force" : "stored")}${version.error ? `: ${version.error}` : ""}
                  </td>
                  <td>${when(version.createdAt)}</td>
                  <td>${version.restoredFrom ?? "—"}</td>
                  <td>${position > 0 && html`<${Activate} kind=${kind} version=${version.version} act=${act} />`}</td>
                </tr>`,
            )}
          </tbody>
        </table>
        ${index >= 0 && html`<${VersionDiff} key=${`${chosen}-${versions.length}`} kind=${kind} version=${chosen} previous=${versions[index + 1]?.version} />`}`
    }`;
}
