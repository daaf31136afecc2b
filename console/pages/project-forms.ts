// The forms that create and change a project's backends, containers and domains, each through the dry-run-then-apply
// flow (change.ts) with the project's ETag in If-Match.
import { useState } from "preact/hooks";
import { ChangeOutcome, useChange } from "../change";
import { Field, html } from "../ui";

/** A project as GET /projects/{label} answers it, with the fields the console reads. */
export type Project = { label: string; fullname?: string; backends: any[]; containers: any[]; version: number };

type FormProps = { project: Project; etag: string | null; onApplied: () => void; onReload: () => void };

/** `<container id> <server options>` per line, as the backend's backendContainers. */
function parseContainers(text: string) {
  return text
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const [id, ...options] = line.split(/\s+/);
      return { containerId: Number(id), ...(options.length > 0 && { params: options.join(" ") }) };
    });
}

const containerLines = (backend: any) =>
  (backend?.backendContainers ?? [])
    .map((link: any) => `${link.containerId}${link.params ? ` ${link.params}` : ""}`)
    .join("\n");

/** Answers for the backend form's fields; a refusal of any container's options lands on the containers field. */
function backendBody(values: Record<string, string>) {
  return {
    label: values.label,
    ...(values.fullname && { fullname: values.fullname }),
    ...(values.port && { port: Number(values.port) }),
    params: values.params,
    backendContainers: parseContainers(values.containers),
  };
}

export function BackendForm({ project, etag, onApplied, onReload }: FormProps) {
  const empty = { label: "", fullname: "", port: "", params: "", containers: "" };
  const [values, setValues] = useState<Record<string, string>>(empty);
  const flow = useChange(onApplied, (field) => (field.startsWith("backendContainers") ? "containers" : field));
  const set = (name: string) => (value: string) => (setValues({ ...values, [name]: value }), flow.reset());
  const existing = project.backends.find((backend) => backend.label === values.label);
  const choose = (event: Event) => {
    const backend = project.backends.find((b) => b.label === (event.target as HTMLSelectElement).value);
    const chosen = backend
      ? {
          label: backend.label,
          fullname: backend.fullname ?? "",
          port: String(backend.port),
          params: backend.params ?? "",
          containers: containerLines(backend),
        }
      : empty;
    setValues(chosen);
    flow.reset();
  };
  const before = existing && {
    label: existing.label,
    ...(existing.fullname && { fullname: existing.fullname }),
    port: existing.port,
    params: existing.params ?? "",
    backendContainers: existing.backendContainers.map((l: any) => ({
      containerId: l.containerId,
      ...(l.params && { params: l.params }),
    })),
  };
  const submit = (event: Event) => {
    event.preventDefault();
    flow.check({
      method: "POST",
      path: `/backends/${encodeURIComponent(project.label)}`,
      body: backendBody(values),
      etag,
    });
  };
  return html`<form class="change" aria-labelledby="backend-form-title" onSubmit=${submit}>
    <h3 id="backend-form-title">Create or change a backend</h3>
    <div class="field">
      <label for="backend-choice">Backend</label>
      <select id="backend-choice" onChange=${choose}>
        <option value="">A new backend</option>
        ${project.backends.map((backend) => html`<option value=${backend.label}>${backend.label}</option>`)}
      </select>
    </div>
    <${Field}
      id="label"
      label="Label"
      hint="2 to 32 lowercase letters and digits"
      value=${values.label}
      onInput=${set("label")}
      error=${flow.fieldError("label")}
      required
    />
    <${Field}
      id="fullname"
      label="Full name"
      value=${values.fullname}
      onInput=${set("fullname")}
      error=${flow.fieldError("fullname")}
    />
    <${Field}
      id="port"
      label="Port of the containers"
      type="number"
      hint="80 when left empty"
      value=${values.port}
      onInput=${set("port")}
      error=${flow.fieldError("port")}
    />
    <${Field}
      id="params"
      label="HAProxy options (params)"
      multiline
      hint="One directive per line, from the allowed list (docs/security.md)"
      value=${values.params}
      onInput=${set("params")}
      error=${flow.fieldError("params")}
    />
    <${Field}
      id="containers"
      label="Containers"
      multiline
      hint="One per line: the container's number, then its server options, e.g. 1 check inter 2s"
      value=${values.containers}
      onInput=${set("containers")}
      error=${flow.fieldError("containers")}
    />
    <button type="submit">Check this change (dry run)</button>
    <${ChangeOutcome}
      flow=${flow}
      before=${before}
      what=${`backend ${values.label}`}
      fields=${["label", "fullname", "port", "params", "containers"]}
      onReload=${onReload}
    />
  </form>`;
}

export function ContainerForm({ project, etag, onApplied, onReload }: FormProps) {
  const [values, setValues] = useState<Record<string, string>>({ label: "", fullname: "", hostname: "", ipv6: "" });
  const flow = useChange(onApplied);
  const set = (name: string) => (value: string) => (setValues({ ...values, [name]: value }), flow.reset());
  const existing = project.containers.find((container) => container.label === values.label);
  const before = existing && {
    label: existing.label,
    fullname: existing.fullname,
    hostname: existing.host?.hostname,
    ipv6: existing.ipv6,
  };
  const submit = (event: Event) => {
    event.preventDefault();
    const body = Object.fromEntries(Object.entries(values).filter(([, value]) => value !== ""));
    flow.check({ method: "POST", path: `/containers/${encodeURIComponent(project.label)}`, body, etag });
  };
  const field = (id: string, label: string, hint?: string) =>
    html`<${Field}
      id=${`container-${id}`}
      label=${label}
      hint=${hint}
      value=${values[id]}
      onInput=${set(id)}
      error=${flow.fieldError(id)}
    />`;
  return html`<form class="change" aria-labelledby="container-form-title" onSubmit=${submit}>
    <h3 id="container-form-title">Create or change a container</h3>
    ${field("label", "Label", "an existing label changes that container")} ${field("fullname", "Full name")}
    ${field("hostname", "Host name", "the host it runs on, as the operator registered it")}
    ${field("ipv6", "IPv6 address", "its own address, used by no other container or host")}
    <button type="submit">Check this change (dry run)</button>
    <${ChangeOutcome}
      flow=${flow}
      before=${before}
      what=${`container ${values.label}`}
      fields=${["label", "fullname", "hostname", "ipv6"]}
      onReload=${onReload}
    />
  </form>`;
}

export function DomainForm({ project, etag, onApplied, onReload }: FormProps) {
  const [values, setValues] = useState<Record<string, string>>({
    operation: "CREATE",
    domainName: "",
    backendLabel: project.backends[0]?.label ?? "",
    redirectToUrl: "",
  });
  const flow = useChange(onApplied);
  const set = (name: string) => (value: string) => (setValues({ ...values, [name]: value }), flow.reset());
  const select = (name: string) => (event: Event) => set(name)((event.target as HTMLSelectElement).value);
  const backendLabel = values.backendLabel || (project.backends[0]?.label ?? "");
  const submit = (event: Event) => {
    event.preventDefault();
    const operation = {
      ...values,
      backendLabel,
      projectLabel: project.label,
      ...(values.redirectToUrl === "" && { redirectToUrl: undefined }),
    };
    flow.check({ method: "POST", path: "/domains/massupdate", body: { domainOperations: [operation] }, etag });
  };
  return html`<form class="change" aria-labelledby="domain-form-title" onSubmit=${submit}>
    <h3 id="domain-form-title">Add, change or remove a domain</h3>
    <div class="field">
      <label for="domain-operation">What to do</label>
      <select id="domain-operation" value=${values.operation} onChange=${select("operation")}>
        <option value="CREATE">Add or change</option>
        <option value="DELETE">Remove</option>
      </select>
    </div>
    <${Field}
      id="domainName"
      label="Domain name"
      value=${values.domainName}
      onInput=${set("domainName")}
      error=${flow.fieldError("domainName")}
      required
    />
    <div class="field">
      <label for="domain-backend">Backend it goes to</label>
      <select id="domain-backend" value=${backendLabel} onChange=${select("backendLabel")}>
        ${project.backends.map((backend) => html`<option value=${backend.label}>${backend.label}</option>`)}
      </select>
    </div>
    <${Field}
      id="redirectToUrl"
      label="Redirect to (optional)"
      hint="an http or https address; a trailing * keeps the path"
      value=${values.redirectToUrl}
      onInput=${set("redirectToUrl")}
      error=${flow.fieldError("redirectToUrl")}
    />
    <button type="submit">Check this change (dry run)</button>
    <${ChangeOutcome}
      flow=${flow}
      before=${undefined}
      what=${`domain ${values.domainName}`}
      fields=${["domainName", "redirectToUrl"]}
      onReload=${onReload}
    />
  </form>`;
}
