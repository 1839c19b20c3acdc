// One synthesized shape of the run's synth (test/support/shapes.ts) as CDK's assertions read it, with its
// resources and the logical IDs of its constructs. Template.fromJSON loads only the assertions (~0.1 s).
import { Template } from 'aws-cdk-lib/assertions';
import { logicalIds, template, type SHAPES, type StackIds } from './shapes';

export async function loadShape(name: keyof typeof SHAPES): Promise<{ template: Template; resources: Record<string, unknown>; ids: StackIds }> {
  const t = Template.fromJSON(await template(name));
  return { template: t, resources: t.toJSON().Resources as Record<string, unknown>, ids: await logicalIds(name) };
}
