// The sample RSS 2.0 feed of NEWS_DEMO: a newsroom's latest items as a feed serves them, sample texts written for this
// project. A module rather than an .xml file so that the Worker's bundler and the tests' both inline it as text.
export const SAMPLE_FEED_URL = "https://newsroom.example.com.au/markets/rss.xml";

export const newsroomFeed = `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/">
  <channel>
    <title>Markets | Example Newsroom (sample)</title>
    <link>https://newsroom.example.com.au/markets</link>
    <description>Sample market news about Australian companies, for the demo mode (NEWS_DEMO) of the news API</description>
    <language>en-au</language>
    <lastBuildDate>Thu, 26 Nov 2026 07:00:00 GMT</lastBuildDate>
    <item>
      <title>Westpac and NAB report steady mortgage arrears</title>
      <link>https://newsroom.example.com.au/markets/2026/11/26/westpac-nab-mortgage-arrears</link>
      <guid isPermaLink="true">https://newsroom.example.com.au/markets/2026/11/26/westpac-nab-mortgage-arrears</guid>
      <description>&lt;p&gt;Late payments on home loans held level at &lt;strong&gt;Westpac&lt;/strong&gt; and NAB over the quarter, as borrowers adjusted to higher repayments.&lt;/p&gt;</description>
      <pubDate>Thu, 26 Nov 2026 06:30:00 GMT</pubDate>
      <dc:creator>Sample Desk</dc:creator>
    </item>
    <item>
      <title>Woodside approves the next stage of an offshore gas field</title>
      <link>https://newsroom.example.com.au/markets/2026/11/25/woodside-offshore-gas-next-stage</link>
      <guid isPermaLink="true">https://newsroom.example.com.au/markets/2026/11/25/woodside-offshore-gas-next-stage</guid>
      <description><![CDATA[<p>Woodside Energy said the extra wells would keep its LNG trains full into the next decade; first gas is planned for 2029.</p>]]></description>
      <pubDate>Wed, 25 Nov 2026 23:50:00 GMT</pubDate>
      <dc:creator>Sample Desk</dc:creator>
    </item>
    <item>
      <title>Xero adds payroll tools for small employers</title>
      <link>https://newsroom.example.com.au/markets/2026/11/24/xero-payroll-small-employers</link>
      <guid isPermaLink="true">https://newsroom.example.com.au/markets/2026/11/24/xero-payroll-small-employers</guid>
      <description>The accounting software maker Xero will calculate superannuation and leave for businesses with fewer than 20 staff from February.</description>
      <pubDate>Tue, 24 Nov 2026 05:15:00 GMT</pubDate>
      <dc:creator>Sample Desk</dc:creator>
    </item>
    <item>
      <title>Bunnings owner opens more trade centres (ASX: WES)</title>
      <link>https://newsroom.example.com.au/markets/2026/11/22/bunnings-trade-centres</link>
      <guid isPermaLink="true">https://newsroom.example.com.au/markets/2026/11/22/bunnings-trade-centres</guid>
      <description>The conglomerate plans twelve more warehouses for builders and tradespeople, betting on a pick-up in home construction next year.</description>
      <pubDate>Sun, 22 Nov 2026 21:00:00 GMT</pubDate>
      <dc:creator>Sample Desk</dc:creator>
    </item>
  </channel>
</rss>
`;
