/// The GitHub Actions workflow `sharelane init --ci github` writes: on a pull request that touches the
/// recipes, it builds sharelane and plans the recipe against the base branch's recipe (`plan --against`, no
/// store and no credentials needed), and, when the repository names a store, against that store too; it keeps
/// one comment on the pull request with the plans (found again by a marker and updated, never a second one).
/// A second job runs the recipe's lanes with `sharelane test` and keeps their JUnit report as an artifact.
///
/// Scripts read everything from their environment (no `${{ }}` inside them, so a value can neither inject
/// shell nor be printed by the runner's echo of the script); credentials come from the repository's secrets
/// and sharelane masks them in everything it prints. Actions are pinned to commits, checkouts keep no token,
/// and only the job that comments, which runs no code of the pull request, may write to it: `actionlint` and
/// `zizmor` find nothing (`.ci/run` checks both).
enum GitHubPlanWorkflow {
    /// Where the workflow is written, relative to the repository's root.
    static let path = ".github/workflows/sharelane-plan.yml"

    /// The branch of sharelane's repository the workflow builds unless `SHARELANE_REF` names another: one that
    /// exists in every copy of the repository, where a release tag may not.
    static let defaultRef = "main"

    /// The JUnit report the test job writes and keeps, relative to the repository's root.
    static let reportFile = "sharelane-report.xml"

    /// The marker that finds the workflow's own comment among a pull request's comments.
    static let marker = "<!-- sharelane-plan -->"

    /// The workflow for the recipe at `recipe` (relative to the repository's root), building sharelane at
    /// `version` (a tag of its repository) unless the repository variable `SHARELANE_REF` names another.
    /// `reads` are the other files the recipe reads (includes, `.env` files, `!asset` files), relative to the
    /// root: a pull request that changes only one of them gets its plan too.
    static func yaml(recipe: String, version: String, reads: [String] = []) -> String {
        let watched = ([recipe] + reads.filter { $0 != recipe }.sorted() + [path])
            .map { "      - \"\($0.replacingOccurrences(of: "\"", with: "\\\""))\"" }.joined(separator: "\n")
        return """
            # Plans the sharelane recipe on every pull request that touches it and keeps one comment on the pull
            # request with the plan, updated on each push, and runs the recipe's lanes (`sharelane test`), keeping
            # their JUnit report as the run's artifact. Written by `sharelane init --ci github`.
            #
            # With no store configured, the comment is the plan of the pull request's recipe against the recipe on
            # the base branch: what the change does, read from git, with no store and no credentials. With a store
            # configured, the comment holds the plan against that store first, then the plan against the base branch.
            #
            # In the repository's settings, Secrets and variables → Actions:
            #   variable SHARELANE_REPOSITORY    sharelane's repository on GitHub (OWNER/NAME), built here
            #   variable SHARELANE_REF           its tag or branch to build (default \(version))
            #   variable SHARELANE_STORE         optional: a live store to plan against too, cloudkit: or http://HOST:PORT
            #                                    (a secret works too)
            #   secret   CLOUDKIT_API_TOKEN      the container's API token (cloudkit:, http:)
            #   secret   CLOUDKIT_WEB_AUTH_TOKEN a web auth token of the recipe's owner (cloudkit:)
            #   secret   SHARELANE_REPOSITORY_TOKEN  optional: a token that may read sharelane's repository, when
            #                                    that copy is private (a fine-grained token, Contents: read-only)
            # Secrets never reach the log: the runner masks them and so does sharelane. Pull requests from forks
            # get no secrets, so the jobs run only for branches of this repository. `paths:` lists the files the
            # recipe read when `sharelane init` wrote this (its includes, `.env` files and `!asset` files): add a
            # file the recipe reads later.
            name: sharelane plan

            on:
              pull_request:
                paths:
            \(watched)

            permissions: {}

            concurrency:
              group: sharelane-plan-${{ github.event.pull_request.number }}
              cancel-in-progress: true

            jobs:
              plan:
                name: Plan the recipe
                if: github.event.pull_request.head.repo.full_name == github.repository
                runs-on: ubuntu-24.04
                container: swift:6.3
                permissions:
                  contents: read # to check out the recipes and their history
                outputs:
                  status: ${{ steps.plan.outputs.status }}
                  comment: ${{ steps.plan.outputs.comment }}
                defaults:
                  run:
                    shell: bash
                steps:
            \(installSteps(version: version, wholeHistory: true))

                  - name: Plan
                    id: plan
                    env:
                      SHARELANE: .sharelane-build/.build/release/sharelane
                      SHARELANE_RECIPE: \(recipe)
                      SHARELANE_STORE: ${{ vars.SHARELANE_STORE || secrets.SHARELANE_STORE }}
                      CLOUDKIT_API_TOKEN: ${{ secrets.CLOUDKIT_API_TOKEN }}
                      CLOUDKIT_WEB_AUTH_TOKEN: ${{ secrets.CLOUDKIT_WEB_AUTH_TOKEN }}
                      BASE_REF: ${{ github.base_ref }}
                      PLAN_FILE: ${{ runner.temp }}/sharelane-plan.md
                    run: |
                      # Plans into the file $1 (the markdown plan, or sharelane's message when it fails) with the
                      # options after it; keeps the worst status: 1 a failure, 2 changes, 0 none.
                      status=0
                      plan_into() {
                        local file="$1" result=0
                        shift
                        "$SHARELANE" plan "$SHARELANE_RECIPE" --format markdown --detailed-exitcode "$@" \\
                          > "$file" 2> "$file.errors" || result=$?
                        if [ "$result" -eq 1 ]; then
                          {
                            echo "**sharelane plan failed** for \\`$SHARELANE_RECIPE\\`:"
                            echo
                            echo '```text'
                            head -c 30000 "$file.errors"
                            echo '```'
                          } > "$file"
                        fi
                        cat "$file.errors" >&2
                        if [ "$result" -eq 1 ] || { [ "$result" -eq 2 ] && [ "$status" -eq 0 ]; }; then status=$result; fi
                      }
                      base="git:origin/$BASE_REF"
                      if [ -n "${SHARELANE_STORE:-}" ]; then
                        plan_into "$PLAN_FILE.live"
                        plan_into "$PLAN_FILE.base" --against "$base"
                        {
                          echo "Two plans of \\`$SHARELANE_RECIPE\\`: first against the live store (what \\`sharelane apply\\` would change there now), then against the recipe on \\`$BASE_REF\\` (what this pull request changes)."
                          echo
                          cat "$PLAN_FILE.live"
                          printf '\\n---\\n\\n'
                          cat "$PLAN_FILE.base"
                        } > "$PLAN_FILE"
                        # A comment holds at most 65,536 characters; the live plan stays, the other goes to the run's summary.
                        if [ "$(wc -c < "$PLAN_FILE")" -gt 64000 ]; then
                          {
                            echo "The plan of \\`$SHARELANE_RECIPE\\` against the live store (what \\`sharelane apply\\` would change there now). The plan against the recipe on \\`$BASE_REF\\` is too long to share this comment: it is in the run's summary."
                            echo
                            cat "$PLAN_FILE.live"
                          } > "$PLAN_FILE"
                          cat "$PLAN_FILE.base" >> "$GITHUB_STEP_SUMMARY"
                        fi
                      else
                        plan_into "$PLAN_FILE.base" --against "$base"
                        {
                          echo "The plan of \\`$SHARELANE_RECIPE\\` against the recipe on \\`$BASE_REF\\`: what this pull request changes, read from git. No live store was read (set the repository variable SHARELANE_STORE to plan against one too)."
                          echo
                          cat "$PLAN_FILE.base"
                        } > "$PLAN_FILE"
                      fi
                      echo "status=$status" >> "$GITHUB_OUTPUT"
                      echo "file=$PLAN_FILE" >> "$GITHUB_OUTPUT"
                      # A delimiter the plan cannot hold: its values come from the pull request.
                      delimiter="sharelane-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \\n')"
                      {
                        echo "comment<<$delimiter"
                        cat "$PLAN_FILE"
                        echo
                        echo "$delimiter"
                      } >> "$GITHUB_OUTPUT"

              # Apart from the plan: the only job that may write to the pull request runs none of its code.
              comment:
                name: Comment on the pull request
                needs: plan
                runs-on: ubuntu-24.04
                permissions:
                  pull-requests: write # to write the plan's comment
                steps:
                  - name: Comment on the pull request
                    env:
                      GH_TOKEN: ${{ github.token }}
                      REPOSITORY: ${{ github.repository }}
                      PULL_REQUEST: ${{ github.event.pull_request.number }}
                      COMMENT: ${{ needs.plan.outputs.comment }}
                    run: |
                      marker='\(marker)'
                      printf '%s\\n%s\\n' "$marker" "$COMMENT" > "$RUNNER_TEMP/comment.md"
                      jq -n --rawfile body "$RUNNER_TEMP/comment.md" '{body: $body}' > "$RUNNER_TEMP/comment.json"
                      previous=$(gh api --paginate "repos/$REPOSITORY/issues/$PULL_REQUEST/comments" \\
                        --jq ".[] | select(.user.type == \\"Bot\\" and (.body | startswith(\\"$marker\\"))) | .id")
                      previous=${previous%%$'\\n'*}
                      if [ -n "$previous" ]; then
                        gh api --method PATCH "repos/$REPOSITORY/issues/comments/$previous" \\
                          --input "$RUNNER_TEMP/comment.json" > /dev/null
                      else
                        gh api --method POST "repos/$REPOSITORY/issues/$PULL_REQUEST/comments" \\
                          --input "$RUNNER_TEMP/comment.json" > /dev/null
                      fi

                  - name: Fail when the plan failed
                    if: needs.plan.outputs.status == '1'
                    run: exit 1

              # The recipe's lanes (those with `ci: true`, else every public one), run on a store of the job's own,
              # so that a lane's `- reset` empties nothing that matters. Each step is a test case of the JUnit
              # report kept as the run's artifact `sharelane-report`; each failure is annotated on its line.
              test:
                name: Run the lanes
                if: github.event.pull_request.head.repo.full_name == github.repository
                runs-on: ubuntu-24.04
                container: swift:6.3
                permissions:
                  contents: read # to check out the recipes
                defaults:
                  run:
                    shell: bash
                steps:
            \(installSteps(version: version, wholeHistory: false))

                  - name: Run the lanes
                    id: test
                    env:
                      SHARELANE: .sharelane-build/.build/release/sharelane
                      SHARELANE_RECIPE: \(recipe)
                      REPORT_FILE: \(reportFile)
                    run: |
                      "$SHARELANE" test "$SHARELANE_RECIPE" --store "sqlite:$RUNNER_TEMP/sharelane-test.sqlite" \\
                        --report "junit:$REPORT_FILE"

                  - name: Keep the report
                    if: ${{ !cancelled() }}
                    uses: actions/upload-artifact@ea165f8d65b6e75b540449e92b4886f43607fa02 # v4.6.2
                    with:
                      name: sharelane-report
                      path: \(reportFile)
                      if-no-files-found: warn

            """
    }

    /// The steps of a job that installs sharelane: they check the repository's settings, check out the recipes (with the whole history when
    /// the job plans against the base branch) and sharelane's repository, and build sharelane, cached by its
    /// commit, at `.sharelane-build/.build/release/sharelane`. Indented as a job's steps are.
    static func installSteps(version: String, wholeHistory: Bool) -> String {
        let checkout =
            wholeHistory
            ? """
            # The whole history, so that the base branch is there to plan against (origin/BASE).
                  - name: Check out the recipes
                    uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2
                    with:
                      fetch-depth: 0
                      persist-credentials: false
            """
            : """
            - name: Check out the recipes
                    uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2
                    with:
                      persist-credentials: false
            """
        return """
                  - name: Check the repository's settings
                    env:
                      SHARELANE_REPOSITORY: ${{ vars.SHARELANE_REPOSITORY }}
                    run: |
                      if [ -z "${SHARELANE_REPOSITORY:-}" ]; then
                        echo "::error::set the repository variable SHARELANE_REPOSITORY to sharelane's repository on GitHub (OWNER/NAME)"
                        exit 1
                      fi

                  \(checkout)

                  - name: Check out sharelane
                    uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2
                    with:
                      repository: ${{ vars.SHARELANE_REPOSITORY }}
                      ref: ${{ vars.SHARELANE_REF || '\(version)' }}
                      # The job's own token reads a public copy; a private one needs a token that may read it.
                      token: ${{ secrets.SHARELANE_REPOSITORY_TOKEN || github.token }}
                      path: .sharelane-build
                      persist-credentials: false

                  # In a container job the checkouts belong to another user than the job's, and git refuses to read
                  # such a repository ("dubious ownership") unless told it is safe: plan --against reads git, and the
                  # cache's key is the commit of sharelane built.
                  - name: Let git read the checkouts
                    id: checkouts
                    run: |
                      git config --global --add safe.directory "$GITHUB_WORKSPACE"
                      git config --global --add safe.directory "$GITHUB_WORKSPACE/.sharelane-build"
                      echo "sharelane=$(git -C .sharelane-build rev-parse HEAD)" >> "$GITHUB_OUTPUT"

                  - name: Cache sharelane's build
                    uses: actions/cache@5a3ec84eff668545956fd18022155c47e93e2684 # v4.2.3
                    with:
                      path: .sharelane-build/.build
                      # The commit built: a branch that moves builds anew.
                      key: sharelane-${{ runner.os }}-${{ steps.checkouts.outputs.sharelane }}

                  - name: Build sharelane
                    run: |
                      apt-get update -qq && apt-get install -y -qq libsqlite3-dev >/dev/null
                      swift build -c release --product sharelane --package-path .sharelane-build
            """
    }
}
