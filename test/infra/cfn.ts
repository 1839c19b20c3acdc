// Typed reads of a synthesized CloudFormation template for the CDK tests: its resources by logical id or type, with
// the properties the tests read of each type (CDK's Template hands them out untyped).
import { Template } from 'aws-cdk-lib/assertions';

/** A value CloudFormation resolves at deploy time: a Ref, an Fn::GetAtt or an Fn::Join of such values. */
export interface Intrinsic {
  Ref?: string;
  'Fn::GetAtt'?: [string, string];
  'Fn::Join'?: [string, (string | Intrinsic)[]];
}
export type CfnValue = string | Intrinsic;

/** One resource; `P` names the properties the test reads (open by default). */
export interface Resource<P = Record<string, unknown>> {
  Type: string;
  Properties: P;
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
  DependsOn?: string[];
}
export type Resources = Record<string, Resource>;

export interface FunctionProps {
  Role: Intrinsic;
  Runtime: string;
  Architectures: string[];
  MemorySize: number;
  Timeout: number;
  TracingConfig?: { Mode: string };
  Environment?: { Variables: Record<string, CfnValue> };
  LoggingConfig?: Record<string, unknown>;
}

export interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: CfnValue | CfnValue[];
  Condition?: Record<string, unknown>;
}
export interface PolicyProps {
  Roles: Intrinsic[];
  PolicyDocument: { Statement: Statement[] };
}

export interface Dimension {
  Name: string;
  Value: CfnValue;
}
export interface MetricQuery {
  Id: string;
  Expression?: string;
  MetricStat?: { Metric: { Namespace: string; MetricName: string; Dimensions: Dimension[] } };
}
export interface AlarmProps {
  MetricName?: string;
  Namespace?: string;
  Dimensions: Dimension[];
  Metrics?: MetricQuery[];
  Statistic?: string;
  Threshold: number;
  TreatMissingData: string;
  AlarmActions?: unknown[];
}

export interface RouteProps {
  ApiId: Intrinsic;
  RouteKey: string;
  RouteResponseSelectionExpression?: string;
}
export interface IntegrationProps {
  IntegrationType: string;
  PayloadFormatVersion?: string;
  IntegrationUri: unknown;
}
export interface StageProps {
  StageName: string;
  AccessLogSettings?: { Format: string };
}
export interface LogGroupProps {
  RetentionInDays: number;
}

/** Every resource of a template, by logical id. */
export const resourcesOf = (t: Template): Resources => (t.toJSON() as { Resources: Resources }).Resources;

/** One resource's properties, read as `P` (it fails saying so when the template has no such id). */
export function propsOf<P>(resources: Resources, id: string): P {
  const r = resources[id];
  if (!r) throw new Error(`the template has no resource ${id}`);
  return r.Properties as P;
}

/** The resources of one type (and, for a Template, matching `props` as findResources does), with their ids. */
export function ofType<P>(from: Template | Resources, type: string, props?: object): [string, Resource<P>][] {
  const resources = (from instanceof Template ? from.findResources(type, props) : from) as Record<string, Resource<P>>;
  return Object.entries(resources).filter(([, r]) => r.Type === type);
}

/** The resources of one type, without their ids. */
export const valuesOfType = <P>(from: Template | Resources, type: string, props?: object): Resource<P>[] => ofType<P>(from, type, props).map(([, r]) => r);
