#!/bin/sh
# Entry point of the cardroom image: turn secret files into the variables cardroom reads, then
# run the command (`cardroom serve <service>`, `cardroom migrate`, ...).
#
# For every variable CARDROOM_X_FILE=/path, CARDROOM_X is set to the content of /path (without
# the final newline). docker-compose mounts the secrets as files (deploy/secrets/, see
# docs/deploy.md), so passwords appear neither in the compose file nor in `docker inspect`.
set -eu

for name in $(env | sed -n 's/^\(CARDROOM_[A-Z0-9_]*\)_FILE=.*$/\1/p'); do
    eval "path=\${${name}_FILE}"
    if [ ! -r "$path" ]; then
        echo "cardroom: ${name}_FILE=$path is not a readable file (run 'make secrets'?)" >&2
        exit 78  # EX_CONFIG
    fi
    value=$(cat "$path")
    export "$name=$value"
    unset "${name}_FILE"
done

exec "$@"
