// The rate limit service's request examples in the OpenAPI document, all about the `example` domain of the bundled
// config/ratelimit/example.yaml, so that they work on a fresh `npm start` in any order
// (test/integration/openapi-examples.test.ts sends each one).

/** One request of a free-plan API key: 1000 an hour, so that trying it a few times stays within the limit. */
export const rateLimitRequestExample = {
  domain: "example",
  descriptors: [
    {
      entries: [
        { key: "plan", value: "free" },
        { key: "api_key", value: "key-7f3a9c" },
      ],
    },
  ],
};

/** The rules of the bundled example.yaml (the README's example keeps its limit), and a second domain beside it. */
const EXAMPLE_YAML = `domain: example
descriptors:
  - key: remote_address
    rate_limit: { unit: minute, requests_per_unit: 10 }
  - key: path
    value: /login
    rate_limit: { name: login, unit: minute, requests_per_unit: 5 }
  - key: path
    value: /health
  - key: path
    rate_limit: { unit: second, requests_per_unit: 50 }
  - key: plan
    value: free
    descriptors:
      - key: api_key
        rate_limit: { unit: hour, requests_per_unit: 1000 }
`;

const CHECKOUT_YAML = `domain: checkout
descriptors:
  - key: customer_id
    rate_limit: { unit: minute, requests_per_unit: 20 }
`;

export const configFilesExample = { files: { "example.yaml": EXAMPLE_YAML, "checkout.yaml": CHECKOUT_YAML } };
