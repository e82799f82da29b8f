/**
 * `helmetOptions`: the security headers recommended for the public app, `app.use(helmet(helmetOptions))`.
 * The API answers JSON only; the one HTML page (/docs) loads its script and stylesheet from this origin
 * (docs.ts), so the CSP allows nothing else: no inline script or style, no CDN, no framing.
 * `upgrade-insecure-requests` is off because development serves plain http on localhost; HSTS is left to
 * the TLS terminator in front of the service.
 */
import type { HelmetOptions } from 'helmet';

export const helmetOptions: Readonly<HelmetOptions> = Object.freeze({
  contentSecurityPolicy: {
    useDefaults: false,
    directives: {
      'default-src': ["'none'"],
      'script-src': ["'self'"],
      'style-src': ["'self'"],
      'img-src': ["'self'", 'data:'],
      'connect-src': ["'self'"],
      'base-uri': ["'none'"],
      'form-action': ["'none'"],
      'frame-ancestors': ["'none'"],
    },
  },
  crossOriginResourcePolicy: { policy: 'same-site' },
  referrerPolicy: { policy: 'no-referrer' },
  strictTransportSecurity: false,
  xFrameOptions: { action: 'deny' },
} satisfies HelmetOptions);
