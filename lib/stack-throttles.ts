// Per-route throttles (lib/stack-config.ts routeThrottles) as API Gateway route settings of a stage.
import type { IConstruct } from 'constructs';
import type { CfnStage } from 'aws-cdk-lib/aws-apigatewayv2';
import type { Throttle } from './stack-config';

/**
 * Sets the throttle of each of `routes` that `throttles` names on `stage` (its route settings replace the stage's
 * default for that route). The stage waits for those routes: a route setting for a route not yet made fails.
 */
export function throttleRoutes(stage: IConstruct, routes: { key: string; route: IConstruct }[], throttles: Record<string, Throttle>): void {
  const settings: Record<string, { ThrottlingRateLimit: number; ThrottlingBurstLimit: number }> = {};
  for (const { key, route } of routes) {
    const t = throttles[key];
    if (!t) continue;
    settings[key] = { ThrottlingRateLimit: t.rateLimit, ThrottlingBurstLimit: t.burstLimit };
    stage.node.addDependency(route);
  }
  if (Object.keys(settings).length) (stage.node.defaultChild as CfnStage).routeSettings = settings;
}
