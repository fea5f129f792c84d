import express, { type Router } from 'express';
import swaggerUiDist from 'swagger-ui-dist';

// Swagger UI is served from the installed package: the service must render its documentation
// without reaching any CDN.
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
  docs.use('/api/docs/assets', express.static(swaggerUiDist.getAbsoluteFSPath(), { index: false, fallthrough: true }));
  return docs;
}
