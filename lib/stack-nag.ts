// cdk-nag acknowledgements (each made next to the resource it is about, with its reason), and how they are named.
import { Validations } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
// cdk-nag names a wildcard finding by this flattening of the policy's resource; we name acknowledgements the same way.
import { flattenCfnReference } from 'cdk-nag/lib/utils/flatten-cfn-reference';
import type { StackParts } from './stack-parts';

export const acknowledge = (scope: IConstruct, id: string, reason: string) => Validations.of(scope).acknowledge({ id, reason });

/** cdk-nag's id of the IAM5 finding on a wildcard resource, e.g. AwsSolutions-IAM5[Resource::<Files8E6940B8.Arn>/bots/*]. */
export function wildcardFinding(stack: StackParts, resource: string): string {
  return `AwsSolutions-IAM5[Resource::${flattenCfnReference(stack.resolve(resource))}]`;
}
