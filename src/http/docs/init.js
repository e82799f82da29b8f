/*
 * Swagger UI for /docs, started from a file (the CSP allows no inline script). "Try it out" is offered in
 * development only (data-try-it on <body>), where requests go to this same origin with the token pasted into
 * "Authorize" (npm start prints one); elsewhere the page documents and never sends.
 */
(function () {
  'use strict';
  var tryIt = document.body.getAttribute('data-try-it') === 'true';
  window.ui = window.SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    docExpansion: 'list',
    defaultModelsExpandDepth: 1,
    displayRequestDuration: true,
    persistAuthorization: false,
    tryItOutEnabled: false,
    supportedSubmitMethods: tryIt ? ['get', 'post'] : [],
    validatorUrl: null,
  });
})();
