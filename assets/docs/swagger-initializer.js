// Starts Swagger UI on the /docs page (src/api-docs.ts) with the document its element names. A file rather than an
// inline script, so that the page's Content-Security-Policy can allow only the Worker's own scripts. No validator
// badge: Swagger UI would fetch it from validator.swagger.io.
const root = document.getElementById("swagger-ui");
window.ui = SwaggerUIBundle({
  url: root.dataset.url,
  domNode: root,
  deepLinking: true,
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis],
  layout: "BaseLayout",
});
