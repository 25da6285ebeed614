# expect: parse-error line=3
def plan():
	walk('kitchen') if 'lime' in 'hands' else walk('table')
