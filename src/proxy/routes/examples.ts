// The proxy API's request examples in the OpenAPI document: one first project, "shop", told in the order Swagger UI's
// "Try it out" takes them on a fresh `npm start` (test/integration/openapi-examples.test.ts sends each one).
import type { z } from "../../shared/zod";
import type {
  ApiUserInput,
  BackendInput,
  ContainerInput,
  HostCreate,
  MassDomainUpdate,
  PermissionGrants,
  ProjectInput,
  UserInput,
  ZoneInput,
} from "../installation/inputs";
import type { CertificateInput } from "./schemas";

const PROJECT = "shop";
const HOST = "host1.example.net";
const CONTAINER = "web1";
const BACKEND = "web";
const DOMAIN = "shop.example.com";
const USER_EMAIL = "sam@shop.example.com";
const API_USER = "shop-deployer";
const CERTIFICATE = "shop-example-com";
const PERMISSION = "www-data";

/** Path parameters, by name: the project, container and backend the bodies below create. */
export const PATH_EXAMPLES: Record<string, string> = {
  projectLabel: PROJECT,
  label: PROJECT,
  containerLabel: CONTAINER,
  backendLabel: BACKEND,
  // The examples build one backend: switching it to its own containers is the one switch they can show.
  targetBackendLabel: BACKEND,
  username: API_USER,
  version: "1",
  id: "1",
};
/** The zone that PUT /admin/zones/{name} assigns, and the certificate that PUT /admin/certificates/{name} stores. */
export const ZONE_NAME = DOMAIN;
export const CERTIFICATE_NAME = CERTIFICATE;

type Example<S extends z.ZodType> = z.input<S>;

export const projectExample: Example<typeof ProjectInput> = { label: PROJECT, fullname: "Example Shop" };

export const hostExample: Example<typeof HostCreate> = { hostname: HOST, ipv6: "2001:db8:10::1" };

export const containerExample: Example<typeof ContainerInput> = {
  label: CONTAINER,
  fullname: "Storefront, first instance",
  hostname: HOST,
  ipv6: "2001:db8:10::101",
};

/** containerId 1 is the container above on a fresh installation (its id is in the answer of POST /containers). */
export const backendExample: Example<typeof BackendInput> = {
  label: BACKEND,
  fullname: "Storefront",
  port: 8080,
  domainForwardings: [{ domainName: DOMAIN }],
  backendContainers: [{ containerId: 1 }],
};

export const massUpdateExample: Example<typeof MassDomainUpdate> = {
  domainOperations: [
    { operation: "CREATE", domainName: `www.${DOMAIN}`, projectLabel: PROJECT, backendLabel: BACKEND, enableSSL: true },
    {
      operation: "CREATE",
      domainName: "shop.example.net",
      projectLabel: PROJECT,
      backendLabel: BACKEND,
      redirectToUrl: `https://${DOMAIN}/*`,
    },
  ],
};

export const zoneExample: Example<typeof ZoneInput> = { projectLabel: PROJECT };

export const apiUserExample: Example<typeof ApiUserInput> = {
  username: API_USER,
  password: "deploy-password-change-me",
  email: `deploy@${DOMAIN}`,
  projectPatterns: [PROJECT],
};

export const userExample: Example<typeof UserInput> = {
  email: USER_EMAIL,
  fullname: "Sam Operator",
  sshPublicKey: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPgGB/9vE1U+KdlMVUtVhqzluNv16d/kR0fy7XOVVKJC sam@laptop",
  role: "USER",
  defaultPermission: [PERMISSION],
  proxyPermission: [PROJECT],
};

export const permissionsExample: Example<typeof PermissionGrants> = [{ permission: PERMISSION, userEmail: USER_EMAIL }];

/**
 * A self-signed certificate for shop.example.com and *.shop.example.com, valid until 2126, with its key: an example
 * anyone can read, to try the upload with, never to serve real traffic.
 */
export const certificateExample: Example<typeof CertificateInput> = {
  certificatePem: `-----BEGIN CERTIFICATE-----
MIIBwDCCAWagAwIBAgIUXnEwzRkFGde6iZegWSm85L/duQgwCgYIKoZIzj0EAwIw
GzEZMBcGA1UEAwwQc2hvcC5leGFtcGxlLmNvbTAgFw0yNjExMjYyMzMwMzBaGA8y
MTI2MTEwMjIzMzAzMFowGzEZMBcGA1UEAwwQc2hvcC5leGFtcGxlLmNvbTBZMBMG
ByqGSM49AgEGCCqGSM49AwEHA0IABL0f93KtyvY4DAJibDwn+y1mwVd2h8/6G7a2
tlUhF9uEyxRqpSgpLzvm/WsAM/nB9UVLVj/YKmR19Re3OZRBKz+jgYUwgYIwHQYD
VR0OBBYEFH7/qmC32jjvlb2NByucT4LQ6gyaMB8GA1UdIwQYMBaAFH7/qmC32jjv
lb2NByucT4LQ6gyaMA8GA1UdEwEB/wQFMAMBAf8wLwYDVR0RBCgwJoIQc2hvcC5l
eGFtcGxlLmNvbYISKi5zaG9wLmV4YW1wbGUuY29tMAoGCCqGSM49BAMCA0gAMEUC
IQCzrUlUCX/JFAcEGFN97T5OA8OI1eWW0VH7lbq2ZfTccQIgTTYdGww+mrbU6Jlz
wwJwR7cdSO9fus0Pim4fXe84JQE=
-----END CERTIFICATE-----
`,
  privateKeyPem: `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgggOFguVx9ncYt+zk
SFL575yCi2rX5X6Y4+XngvMG9wKhRANCAAS9H/dyrcr2OAwCYmw8J/stZsFXdofP
+hu2trZVIRfbhMsUaqUoKS875v1rADP5wfVFS1Y/2CpkdfUXtzmUQSs/
-----END PRIVATE KEY-----
`,
  projects: [PROJECT],
};
