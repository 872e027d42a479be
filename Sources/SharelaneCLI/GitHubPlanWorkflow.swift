/// The GitHub Actions workflow `sharelane init --ci github` writes: on a pull request that touches the
/// recipes, it builds sharelane, plans the recipe against the store the repository names, and keeps one
/// comment on the pull request with the plan (found again by a marker and updated, never a second one).
///
/// The plan step's script reads everything from its environment (no `${{ }}` inside it, so a value can
/// neither inject shell nor be printed by the runner's echo of the script); credentials come from the
/// repository's secrets and sharelane masks them in everything it prints.
enum GitHubPlanWorkflow {
    /// Where the workflow is written, relative to the repository's root.
    static let path = ".github/workflows/sharelane-plan.yml"

    /// The branch of sharelane's repository the workflow builds unless `SHARELANE_REF` names another: one that
    /// exists in every copy of the repository, where a release tag may not.
    static let defaultRef = "main"

    /// The marker that finds the workflow's own comment among a pull request's comments.
    static let marker = "<!-- sharelane-plan -->"

    /// The workflow for the recipe at `recipe` (relative to the repository's root), building sharelane at
    /// `version` (a tag of its repository) unless the repository variable `SHARELANE_REF` names another.
    static func yaml(recipe: String, version: String) -> String {
        """
        # Plans the sharelane recipe on every pull request that touches it and keeps one comment on the pull
        # request with the plan, updated on each push. Written by `sharelane init --ci github`.
        #
        # In the repository's settings, Secrets and variables → Actions:
        #   variable SHARELANE_REPOSITORY    sharelane's repository on GitHub (OWNER/NAME), built here
        #   variable SHARELANE_REF           its tag or branch to build (default \(version))
        #   variable SHARELANE_STORE         the store to plan against: cloudkit: or http://HOST:PORT (a secret works too)
        #   secret   CLOUDKIT_API_TOKEN      the container's API token (cloudkit:, http:)
        #   secret   CLOUDKIT_WEB_AUTH_TOKEN a web auth token of the recipe's owner (cloudkit:)
        # Secrets never reach the log: the runner masks them and so does sharelane. Pull requests from forks
        # get no secrets, so the job runs only for branches of this repository. Add the files the recipe
        # includes to `paths:` below.
        name: sharelane plan

        on:
          pull_request:
            paths:
              - "\(recipe)"
              - "Recipes/**"
              - "\(path)"

        permissions:
          contents: read
          issues: write
          pull-requests: write

        concurrency:
          group: sharelane-plan-${{ github.event.pull_request.number }}
          cancel-in-progress: true

        jobs:
          plan:
            if: github.event.pull_request.head.repo.full_name == github.repository
            runs-on: ubuntu-24.04
            container: swift:6.3
            defaults:
              run:
                shell: bash
            steps:
              - name: Check the repository's settings
                env:
                  SHARELANE_REPOSITORY: ${{ vars.SHARELANE_REPOSITORY }}
                run: |
                  if [ -z "${SHARELANE_REPOSITORY:-}" ]; then
                    echo "::error::set the repository variable SHARELANE_REPOSITORY to sharelane's repository on GitHub (OWNER/NAME)"
                    exit 1
                  fi

              - name: Check out the recipes
                uses: actions/checkout@v4

              - name: Check out sharelane
                uses: actions/checkout@v4
                with:
                  repository: ${{ vars.SHARELANE_REPOSITORY }}
                  ref: ${{ vars.SHARELANE_REF || '\(version)' }}
                  path: .sharelane-build

              - name: Cache sharelane's build
                uses: actions/cache@v4
                with:
                  path: .sharelane-build/.build
                  key: sharelane-${{ runner.os }}-${{ vars.SHARELANE_REF || '\(version)' }}-${{ hashFiles('.sharelane-build/Package.swift') }}

              - name: Build sharelane
                run: |
                  apt-get update -qq && apt-get install -y -qq libsqlite3-dev >/dev/null
                  swift build -c release --product sharelane --package-path .sharelane-build

              - name: Plan
                id: plan
                env:
                  SHARELANE: .sharelane-build/.build/release/sharelane
                  SHARELANE_RECIPE: \(recipe)
                  SHARELANE_STORE: ${{ vars.SHARELANE_STORE || secrets.SHARELANE_STORE }}
                  CLOUDKIT_API_TOKEN: ${{ secrets.CLOUDKIT_API_TOKEN }}
                  CLOUDKIT_WEB_AUTH_TOKEN: ${{ secrets.CLOUDKIT_WEB_AUTH_TOKEN }}
                  PLAN_FILE: ${{ runner.temp }}/sharelane-plan.md
                run: |
                  if [ -z "${SHARELANE_STORE:-}" ]; then
                    echo "::error::set the repository variable SHARELANE_STORE to the store to plan against (cloudkit: or http://HOST:PORT)"
                    exit 1
                  fi
                  status=0
                  "$SHARELANE" plan "$SHARELANE_RECIPE" --format markdown --detailed-exitcode \\
                    > "$PLAN_FILE" 2> "$PLAN_FILE.errors" || status=$?
                  if [ "$status" -eq 1 ]; then
                    {
                      echo "**sharelane plan failed** for \\`$SHARELANE_RECIPE\\`:"
                      echo
                      echo '```text'
                      head -c 60000 "$PLAN_FILE.errors"
                      echo '```'
                    } > "$PLAN_FILE"
                  fi
                  cat "$PLAN_FILE.errors" >&2
                  echo "status=$status" >> "$GITHUB_OUTPUT"
                  echo "file=$PLAN_FILE" >> "$GITHUB_OUTPUT"

              - name: Comment on the pull request
                uses: actions/github-script@v7
                env:
                  PLAN_FILE: ${{ steps.plan.outputs.file }}
                with:
                  script: |
                    const fs = require('fs');
                    const marker = '\(marker)';
                    const body = `${marker}\\n${fs.readFileSync(process.env.PLAN_FILE, 'utf8')}`;
                    const { owner, repo } = context.repo;
                    const issue_number = context.issue.number;
                    const comments = await github.paginate(github.rest.issues.listComments, {
                      owner, repo, issue_number, per_page: 100,
                    });
                    const previous = comments.find(
                      (comment) => comment.user.type === 'Bot' && comment.body.startsWith(marker));
                    if (previous) {
                      await github.rest.issues.updateComment({ owner, repo, comment_id: previous.id, body });
                    } else {
                      await github.rest.issues.createComment({ owner, repo, issue_number, body });
                    }

              - name: Fail when the plan failed
                if: steps.plan.outputs.status == '1'
                run: exit 1

        """
    }
}
