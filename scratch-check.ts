import { importTranscriptFile } from "/work/main/src/formats/transcripts/index.ts";
import { transcriptFiles, transcriptName } from "/work/main/test/support/transcripts.ts";
import { replayableMessages, requestPoints } from "/work/main/src/replay/replay.ts";
for (const file of transcriptFiles) {
  for (const c of await importTranscriptFile(file)) {
    if (c.sidechain) continue;
    const ms = replayableMessages(c.messages);
    const max = Math.max(0, ...c.messages.map(m => m.usage?.input ?? 0));
    const models = [...new Set(c.messages.map(m=>m.model).filter(Boolean))].join(",");
    console.log(transcriptName(file).slice(0,70).padEnd(70), c.format.padEnd(12), String(ms.length).padStart(5), String(requestPoints(ms).length).padStart(4), String(max).padStart(7), models.slice(0,60));
  }
}
