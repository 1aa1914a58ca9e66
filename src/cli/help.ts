import type {Command} from '@oclif/core/command'
import {CommandHelp, Help} from '@oclif/core/help'
import type * as Interfaces from '@oclif/core/interfaces'

/** A heading of the root help and the commands listed under it (commands/topics.ts). */
export interface HelpTopic {
  name: string
  summary: string
  commands: string[]
}

/**
 * A command's help prints its summary (the first line of its description when it has no summary)
 * above USAGE; oclif's DESCRIPTION section then repeats it. This one leaves out what was already
 * printed, and the section itself when nothing else is left.
 */
class MedpanelCommandHelp extends CommandHelp {
  protected override description(): string | undefined {
    const {summary, description} = this.command
    const lines = (description ?? '').split(/\r?\n/)
    const rest = summary ? lines : lines.slice(1)
    const text = rest.join('\n').trim()
    return text ? this.wrap(text) : undefined
  }
}

/**
 * medpanel's help: the root lists commands under topic headings (as gh and heroku do) instead of
 * one alphabetical list of forty-odd names; the names themselves stay flat. A command that is in
 * no topic still shows, under OTHER COMMANDS, rather than vanishing from the listing.
 */
export class MedpanelHelp extends Help {
  protected override CommandHelpClass: typeof CommandHelp = MedpanelCommandHelp

  constructor(
    config: Interfaces.Config,
    private readonly topics: HelpTopic[],
    options: Partial<Interfaces.HelpOptions> = {},
  ) {
    super(config, options)
  }

  protected override async showRootHelp(): Promise<void> {
    this.log(this.formatRoot())
    this.log('')
    const listed = new Map<string, Command.Loadable>(this.sortedCommands.filter((c) => c.id).map((c) => [c.id, c]))
    const sections: Section[] = []
    for (const topic of this.topics) {
      const commands = topic.commands.map((id) => listed.get(id)).filter((c): c is Command.Loadable => c !== undefined)
      for (const command of commands) listed.delete(command.id)
      if (commands.length > 0) sections.push({header: `${topic.name.toUpperCase()}: ${topic.summary}`, commands})
    }
    if (listed.size > 0) sections.push({header: 'OTHER COMMANDS', commands: [...listed.values()]})
    this.logSections(sections)
    this.log(`Run ${this.config.bin} COMMAND --help (or ${this.config.bin} help COMMAND) for a command's flags and examples.`)
  }

  /** One heading of the root help alone: `medpanel clients`, `medpanel help clients`. */
  showTopic(topic: HelpTopic): void {
    const byId = new Map<string, Command.Loadable>(this.sortedCommands.filter((c) => c.id).map((c) => [c.id, c]))
    const commands = topic.commands.map((id) => byId.get(id)).filter((c): c is Command.Loadable => c !== undefined)
    this.logSections([{header: `${topic.name.toUpperCase()}: ${topic.summary}`, commands}])
    this.log(`Run ${this.config.bin} COMMAND --help for a command's flags and examples; ${this.config.bin} --help lists every heading.`)
  }

  private logSections(sections: Section[]): void {
    // One column width for every section, so the summaries line up down the whole listing.
    const width = Math.max(...sections.flatMap((s) => s.commands.map((c) => c.id.length)))
    for (const {header, commands} of sections) {
      // Rendered here, not with renderList, which switches a whole section to another layout
      // as soon as one summary wraps past five lines.
      const rows = commands.map((c) => {
        const [first = '', ...more] = this.wrap(firstSentence(this.summary(c)) ?? '', width + 4)
          .split('\n')
          .map((line) => line.trim())
        return [`  ${c.id.padEnd(width)}  ${first}`, ...more.map((line) => `${' '.repeat(width + 4)}${line}`)].join('\n')
      })
      this.log(`${header}\n${rows.join('\n')}`)
      this.log('')
    }
  }
}

interface Section {
  header: string
  commands: Command.Loadable[]
}

/** The root listing keeps to a command's first sentence; its own --help has the rest. */
function firstSentence(summary: string | undefined): string | undefined {
  return summary?.replace(/^(.+?\.)\s.*$/s, '$1')
}
