/** One site: its views as tabs (a link each, so the browser's history and keyboard work). */
import { useRoute } from 'preact-iso';
import { BlocksView } from './blocks-view.tsx';
import { DetectorsView } from './detectors-view.tsx';
import { EventsView } from './events-view.tsx';
import { FleetView } from './fleet-view.tsx';
import { KeysView } from './keys-view.tsx';
import { RulesView } from './rules-view.tsx';
import { TrafficView } from './traffic-view.tsx';

const TABS = {
  traffic: { label: 'Traffic', view: TrafficView },
  rules: { label: 'Rules', view: RulesView },
  blocks: { label: 'Automatic blocks', view: BlocksView },
  events: { label: 'Events', view: EventsView },
  fleet: { label: 'Fleet', view: FleetView },
  detectors: { label: 'Detectors', view: DetectorsView },
  keys: { label: 'Keys', view: KeysView },
} as const;
type Tab = keyof typeof TABS;

export function SiteView() {
  const { params } = useRoute();
  const siteId = params.site ?? '';
  const tab: Tab = params.tab && params.tab in TABS ? (params.tab as Tab) : 'traffic';
  const View = TABS[tab].view;
  return (
    <section>
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href="/ui/">Sites</a> / <strong>{siteId}</strong>
      </nav>
      <nav class="tabs" aria-label="Site">
        {(Object.keys(TABS) as Tab[]).map((t) => (
          <a
            key={t}
            href={`/ui/sites/${encodeURIComponent(siteId)}/${t}`}
            aria-current={t === tab ? 'page' : undefined}
          >
            {TABS[t].label}
          </a>
        ))}
      </nav>
      <View key={`${siteId}/${tab}`} siteId={siteId} />
    </section>
  );
}
