import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import express, { type Router } from 'express';

// Swagger UI is served from the installed package: the service must render its documentation
// without reaching any CDN. Only its folder is resolved; importing the package would load its
// whole browser bundle into the server at start-up.
const assetsFolder = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const page = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Assistant service API</title>
  <link rel="stylesheet" href="/api/docs/assets/swagger-ui.css">
</head>
<body>
  <div id="docs"></div>
  <script src="/api/docs/assets/swagger-ui-bundle.js"></script>
  <script>
    window.ui = SwaggerUIBundle({ url: '/api/openapi.json', dom_id: '#docs', deepLinking: true });
  </script>
</body>
</html>`;

export function docsRouter(): Router {
  const docs = express.Router();
  docs.get('/api/docs', (_req, res) => {
    res.type('html').send(page);
  });
  docs.use('/api/docs/assets', express.static(assetsFolder, { index: false }));
  return docs;
}
