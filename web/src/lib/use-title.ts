// The tab's title follows the page, so screen-reader users and tab lists know where they are.
import { useEffect } from 'react';

export function useTitle(title: string, organization?: string): void {
  useEffect(() => {
    document.title = organization ? `${title} · ${organization} · Assent` : `${title} · Assent`;
  }, [title, organization]);
}
