#!/bin/sh
echo this file is not executable
