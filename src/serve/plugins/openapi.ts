// The OpenAPI document of xling serve (@fastify/swagger, built from the routes' schemas) and its
// UI at /docs (@fastify/swagger-ui). Register before the routes it documents.
import fp from 'fastify-plugin';
import type { FastifyPluginAsync } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';

const openapi: FastifyPluginAsync = async (app) => {
  await app.register(swagger, {
    openapi: {
      info: { title: 'xling', description: 'Language-agnostic sentence embeddings: TEI-compatible embedding routes, search and mining', version: '0.1.0' },
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
};

export const openapiPlugin = fp(openapi, { name: 'xling-openapi', fastify: '5.x' });
