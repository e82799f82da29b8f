import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import helmet from 'helmet';
import type { Config } from './config/types';
import type { GatewayClient } from './gateway/client';
import { cardGuard, cors, docsRouter, errorHandler, helmetOptions, jsonBody, notFoundHandler, requestId } from './http';
import { customersRouter } from './http/routes/customers';
import { paymentMethodsRouter } from './http/routes/payment-methods';
import { demoRouter, type DemoOptions } from './http/demo';
import type { CardService } from './payment-methods/add-card';
import type { CardWrites } from './payment-methods/add-card-write';
import { saleLifecycleRouter } from './http/routes/sale-lifecycle';
import { salesRouter } from './http/routes/sales';
import { eventsRouter } from './http/routes/events';
import { subscriptionsRouter } from './http/routes/subscriptions';
import { settlementsRouter } from './http/routes/settlements';
import type { SettlementStore } from './settlements';
import type { SubscriptionService } from './subscriptions';
import type { EventLog } from './events';
import { gatewayWebhooksRouter } from './http/routes/gateway-webhooks';
import type { GatewayWebhookIntake } from './webhooks';
import type { Logger } from './observability/logger';
import type { Metrics } from './observability/metrics';
import type { Checkout } from './sales/checkout';
import type { SaleActions } from './sales/sale-actions';
import type { SaleLookup } from './sales/sale-lookup';
import type { Budget, TokenService } from './tokens/token-service';
import type { Wallet } from './wallet';

export interface AppDeps {
  config: Config;
  logger: Logger;
  metrics: Metrics;
  authenticate: express.RequestHandler;
  gateway: GatewayClient;
  budget: Budget;
  tokens: TokenService;
  checkout: Checkout;
  lookup: SaleLookup;
  actions: SaleActions;
  cards: CardService;
  cardWrites: CardWrites;
  /** The payment event log (`GET /v1/events`). */
  events: EventLog;
  /** The gateway's webhooks in; absent (GATEWAY_WEBHOOK_SECRET unset), the route does not exist (404). */
  gatewayWebhooks?: GatewayWebhookIntake;
  /** Customers, payment methods, their view and removals (issue 26). */
  wallet: Wallet;
  /** Subscriptions (issue 37). */
  subscriptions: SubscriptionService;
  /** Settlements kept (issue 39): `GET /v1/settlements…`. */
  settlements: Pick<SettlementStore, 'get' | 'list'>;
  /** Development with the embedded sandbox only: the /demo checkout page (absent, /demo answers 404). */
  demo?: DemoOptions;
  /** While draining, keep-alive connections are told to close so clients move to other replicas. */
  draining(): boolean;
}

/** Route template for metrics labels: never the raw path, which carries caller input. */
function routeLabel(req: Request): string {
  const route = (req.route as { path?: string } | undefined)?.path;
  return typeof route === 'string' ? `${req.baseUrl}${route}` : 'unmatched';
}

/** The public API: middleware in the order the HTTP edge documents (src/http/index.ts), then routes. No I/O here. */
export function createApp(deps: AppDeps): Express {
  const { config, logger, metrics } = deps;
  const app = express();
  app.disable('x-powered-by');
  // API answers are per caller and never cached; hashing every body for an ETag cost ~1 % of a sale's CPU.
  // The static /docs assets carry their own precomputed ETags (src/http/docs.ts).
  app.set('etag', false);
  app.set('trust proxy', false);
  app.use(requestId(logger));
  app.use((req: Request, res: Response, next: NextFunction) => {
    const end = metrics.httpDuration.startTimer();
    if (deps.draining()) res.set('Connection', 'close');
    res.once('finish', () => end({ method: req.method, route: routeLabel(req), status: String(res.statusCode) }));
    next();
  });
  app.use(helmet(helmetOptions));
  app.use(cors(config));
  // The gateway's webhooks need the raw body (its signature), checked before anything parses it: ahead of the
  // JSON parser and the card guard, which would read and scan it first.
  if (deps.gatewayWebhooks) app.use(gatewayWebhooksRouter({ intake: deps.gatewayWebhooks, bodyLimitBytes: config.http.bodyLimitBytes }));
  // Only GET and HEAD can match the docs: other methods skip its router (entering one costs every sale).
  // The docs and demo routes answer before cardGuard below, so each runs the guard on its own routes: a
  // guard up here would scan every GET twice, or need jsonBody moved ahead of the docs for POST bodies.
  const docs = docsRouter({ tryIt: config.env === 'development', demo: deps.demo !== undefined });
  app.use((req: Request, res: Response, next: NextFunction) => (req.method === 'GET' || req.method === 'HEAD' ? docs(req, res, next) : next()));
  if (deps.demo) app.use(demoRouter(deps.demo));
  app.use(jsonBody(config));
  app.use(cardGuard());
  app.use(salesRouter({ checkout: deps.checkout, authenticate: deps.authenticate }));
  app.use(saleLifecycleRouter({ lookup: deps.lookup, actions: deps.actions, authenticate: deps.authenticate }));
  app.use(customersRouter({ gateway: deps.gateway, budget: deps.budget, wallet: deps.wallet, authenticate: deps.authenticate }));
  app.use(paymentMethodsRouter({ cards: deps.cards, cardWrites: deps.cardWrites, tokens: deps.tokens, wallet: deps.wallet, authenticate: deps.authenticate }));
  app.use(subscriptionsRouter({ subscriptions: deps.subscriptions, authenticate: deps.authenticate }));
  app.use(eventsRouter({ log: deps.events, authenticate: deps.authenticate }));
  app.use(settlementsRouter({ store: deps.settlements, authenticate: deps.authenticate }));
  app.use(notFoundHandler);
  app.use(errorHandler(logger));
  return app;
}
