import type { Config } from '../config/types';
import type { LimiterClasses, LimiterLimits } from './types';

/** The limiter's view of the typed config (GATEWAY_RATE_* and limiter.* settings of the contract). */
export function limiterSettings(config: Pick<Config, 'gateway' | 'limiter'>): {
  limits: LimiterLimits;
  classes: LimiterClasses;
  expectedReplicas: number;
} {
  const { gateway, limiter } = config;
  return {
    limits: {
      perWindow: gateway.ratePerMinute,
      windowMs: gateway.rateWindowMs,
      perDay: gateway.ratePerDay,
      dayWindowMs: gateway.rateDayWindowMs,
      marginMs: gateway.rateMarginMs,
    },
    classes: {
      saleMaxWaitMs: limiter.saleMaxWaitMs,
      readMaxWaitMs: limiter.readMaxWaitMs,
      saleReservedSlots: limiter.saleReservedSlots,
      readDayShare: limiter.readDayShare,
      backgroundDayShare: limiter.backgroundDayShare,
      callerShare: limiter.callerShare,
      callerDayShare: limiter.callerDayShare,
    },
    expectedReplicas: limiter.expectedReplicas,
  };
}

/** The budget is per endpoint key: the gateway client's own reading of the base URL, so both always agree. */
export { endpointKeyOf } from '../gateway/client';
