// One project: its backends (with their containers and server options), containers and domains (redirect and
// certificate state), with the forms that change them. The project's ETag is kept for If-Match.
import { useEffect, useState } from "preact/hooks";
import { proxyApi, type Answer } from "../api";
import { DiffView, diffLines, withContext } from "../diff";
import { html, pending, useAnswer } from "../ui";
import { BackendForm, ContainerForm, DomainForm, type Project } from "./project-forms";
import type { Session } from "./sign-in";

/** A backend's links show the container's number: the project's view gives containers by label, without it. */
function Backends({ project }: { project: Project }) {
  if (project.backends.length === 0) return html`<p>No backend yet.</p>`;
  return html`<table>
    <caption>
      Backends
    </caption>
    <thead>
      <tr>
        <th scope="col">Label</th>
        <th scope="col">Port</th>
        <th scope="col">Options (params)</th>
        <th scope="col">Containers</th>
        <th scope="col">Domains</th>
      </tr>
    </thead>
    <tbody>
      ${project.backends.map(
        (backend) =>
          html`<tr>
            <th scope="row">${backend.label}</th>
            <td>${backend.port}</td>
            <td><pre>${backend.params || "—"}</pre></td>
            <td>
              ${backend.backendContainers.map((link: any) => html`<div>#${link.containerId}${link.params ? `: ${link.params}` : ""}</div>`)}
            </td>
            <td>${backend.domainForwardings.map((domain: any) => domain.domainName).join(", ") || "—"}</td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}

function Containers({ project }: { project: Project }) {
  if (project.containers.length === 0) return html`<p>No container yet.</p>`;
  return html`<table>
    <caption>
      Containers
    </caption>
    <thead>
      <tr>
        <th scope="col">Label</th>
        <th scope="col">Host</th>
        <th scope="col">IPv6 address</th>
        <th scope="col">SSH permissions</th>
      </tr>
    </thead>
    <tbody>
      ${project.containers.map(
        (container) =>
          html`<tr>
            <th scope="row">${container.label}</th>
            <td>${container.host?.hostname ?? container.hostId}</td>
            <td>${container.ipv6}</td>
            <td>
              ${container.containerPermissions.map((grant: any) => `${grant.user?.email} (${grant.permission})`).join(", ") || "—"}
            </td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}

function Domains({ project }: { project: Project }) {
  const domains = project.backends.flatMap((backend) => backend.domainForwardings);
  if (domains.length === 0) return html`<p>No domain yet.</p>`;
  const certificate = (domain: any) =>
    domain.certProvided
      ? "provided by you"
      : domain.publicCaCertificate
        ? "from a public authority (ACME)"
        : "none: plain HTTP";
  return html`<table>
    <caption>
      Domains
    </caption>
    <thead>
      <tr>
        <th scope="col">Name</th>
        <th scope="col">Backend</th>
        <th scope="col">Redirects to</th>
        <th scope="col">Certificate</th>
      </tr>
    </thead>
    <tbody>
      ${domains.map(
        (domain) =>
          html`<tr>
            <th scope="row">${domain.domainName}</th>
            <td>${domain.backendLabel}</td>
            <td>${domain.redirectToUrl || "—"}</td>
            <td>${certificate(domain)}</td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}

export function ProjectPage({ label }: { label: string; session: Session }) {
  const { answer, reload } = useAnswer(() => proxyApi("GET", `/projects/${encodeURIComponent(label)}`), [label]);
  const project: Project | undefined = answer?.ok ? answer.body : undefined;
  // The project as it was when a write met a conflict, and the answer it came from, until the reload answers; then
  // the two states the panel compares, fixed: later reloads (after the user's own writes) do not change it.
  const [conflictFrom, setConflictFrom] = useState<{ project?: Project; answer?: Answer } | undefined>(undefined);
  const [meanwhile, setMeanwhile] = useState<{ before?: Project; after: Project } | undefined>(undefined);
  useEffect(() => {
    if (!conflictFrom || !project || answer === conflictFrom.answer) return;
    setMeanwhile({ before: conflictFrom.project, after: project });
    setConflictFrom(undefined);
  }, [answer]);
  const reloadAfterConflict = () => {
    setConflictFrom({ project, answer });
    reload();
  };
  // A write answers the project's new ETag, which is the one to send until the reload it starts has answered: the
  // next change made meanwhile would otherwise be refused as a conflict with the user's own write.
  const [written, setWritten] = useState<{ etag: string; over?: Answer } | undefined>(undefined);
  const etag = written && written.over === answer ? written.etag : (answer?.etag ?? null);
  const applied = (result: Answer) => {
    if (result.etag) setWritten({ etag: result.etag, over: answer });
    reload();
  };
  const context = { project: project!, etag, onApplied: applied, onReload: reloadAfterConflict };
  return html`<h1>Project ${label}</h1>
    ${
      pending(answer) ??
      html`${project!.fullname && html`<p>${project!.fullname}</p>`}
        ${
          meanwhile &&
          html`<section aria-label="What changed meanwhile">
            <h2>What changed meanwhile</h2>
            <${DiffView}
              lines=${withContext(diffLines(JSON.stringify(meanwhile.before, null, 2), JSON.stringify(meanwhile.after, null, 2)))}
              caption="The project since you loaded it"
            />
            <button type="button" onClick=${() => setMeanwhile(undefined)}>Dismiss</button>
          </section>`
        }
        <h2>Backends</h2>
        <${Backends} project=${project} />
        <h2>Containers</h2>
        <${Containers} project=${project} />
        <h2>Domains</h2>
        <${Domains} project=${project} />
        <h2>Change the project</h2>
        <${BackendForm} ...${context} />
        <${ContainerForm} ...${context} />
        <${DomainForm} ...${context} />`
    }`;
}
